// What the sandbox must not see, found on the host: the blocked paths, cordon's own state, the
// other mounts that show either, and the program files of blocked commands. Parent side; reads
// the host (and /proc/self/mountinfo).
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "host_paths.hpp"

namespace cordon::landlock {

/// Where the command may write: the canonical writable directories (the workspace and the
/// write grants; a symlink beneath one is never followed, since a sandbox could have planted
/// it or could swap it), and the host uid it runs as.
struct Writable {
  const std::vector<std::string>& dirs;
  uid_t uid = 0;
  std::vector<gid_t> gids;  ///< the groups it runs with
};

/// The applet names of the multi-call program `file` (busybox_applets, or a cache of it).
using AppletsOf = std::function<std::vector<std::string>(const std::string& file)>;

/// Whether a process of `uid` in `gids` can reach `path` now or ever: every directory above it
/// is searchable by it, or its own (an owner can make it so). Reads the host.
bool reachable_by(const std::string& path, uid_t uid, const std::vector<gid_t>& gids);

/// Fills view.blocked, blocked_missing, own_state, aliases and blocked_exec for `plan`.
/// Throws cordon::Error CRD1003 when a blocked path or cordon's own state passes through a
/// symlink in a writable directory, and when cordon's own state is missing where the command
/// could create it.
void gather_masks(const Plan& plan, const Writable& writable, const std::string& program_search,
                  const AppletsOf& applets_of, HostView& view);

/// The blocked commands (of `blocked`) that `path` is, or provides as applets, when it is a
/// program masked in the sandbox (view.blocked_exec, by device and inode); empty otherwise.
/// What a refused execve of `path` is explained with. Reads the host.
std::vector<std::string> masked_for(const std::string& path, const HostView& view,
                                    const std::vector<std::string>& blocked,
                                    const AppletsOf& applets_of);

/// One line of /proc/self/mountinfo: the mount's file system and what of it is shown where.
struct MountLine {
  dev_t dev = 0;
  std::string root;   ///< the directory of the file system mounted
  std::string point;  ///< where, in this mount namespace
};

/// The lines of mountinfo(5) text; malformed lines are skipped. Pure.
std::vector<MountLine> parse_mountinfo(std::string_view text);

/// Every other path in `mounts` that shows `object` (canonical, of file system `dev`): where
/// another mount of the same file system has a root that contains it. Pure.
std::vector<std::string> alias_paths(const std::vector<MountLine>& mounts, dev_t dev,
                                     const std::string& object);

/// The applet names of busybox in `data` (its program file, or the part holding the names);
/// empty when there is no applet table. Pure.
std::vector<std::string> applet_table(std::string_view data);

/// The applets of the busybox program `file`, from its .rodata section; empty when it has none.
std::vector<std::string> busybox_applets(const std::string& file);

}  // namespace cordon::landlock
