// What the policy's paths are on this host: canonical, existing, file or directory; which
// program files the blocked and allowed command names resolve to. Parent side; reads the host.
#pragma once

#include <cordon/sdk/backend.hpp>

#include <sys/types.h>
#include <unistd.h>

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cordon::landlock {

/// One existing host path, canonical (no symlink, no ".."), and what it was when resolved.
struct HostPath {
  std::string path;
  bool dir = false;
  dev_t dev = 0;  ///< with `ino`: the identity the keeper checks again (0: not recorded)
  ino_t ino = 0;
  bool operator==(const HostPath& o) const { return path == o.path && dir == o.dir; }
};

/// A top-level entry of the host's "/" (read = "host" rebuilds the root from these).
struct RootEntry {
  std::string name;
  enum class Kind { dir, file, symlink } kind = Kind::dir;
  std::string link_target;  ///< for symlinks
  bool operator==(const RootEntry&) const = default;
};

/// The policy's paths as they are on this host.
struct HostView {
  HostPath workspace;
  /// Whether filesystem.write grants the workspace (itself or an ancestor): else it is bound
  /// read-only and gets read rules only.
  bool workspace_writable = false;
  std::string home;  ///< canonical when it exists, else as given
  bool home_exists = false;
  bool read_host = false;
  std::vector<HostPath> read;     ///< filesystem.read (existing only)
  std::vector<HostPath> write;    ///< filesystem.write (existing only)
  std::vector<HostPath> blocked;  ///< filesystem.blocked (existing only), canonical targets
  std::vector<std::string> blocked_missing;  ///< filesystem.blocked paths that do not exist here
  std::vector<HostPath> own_state;  ///< cordon's own state (Plan::protected_paths) present here
  /// The same objects as `blocked` and `own_state` where another mount of their file system
  /// shows them (a bind mount elsewhere on the host), each with the object's identity.
  std::vector<HostPath> aliases;
  /// Blocked paths and cordon's own state the command's user cannot reach (a directory above
  /// is neither searchable by it nor its own): nothing to mask, and the keeper could not
  /// open them under that user.
  std::vector<std::string> unreachable;
  std::vector<HostPath> blocked_exec;        ///< files the blocked commands resolve to (and a
                                             ///< multi-call binary that provides one of them)
  std::vector<std::string> allowed_exec;     ///< files the allowed commands resolve to, and their
                                             ///< interpreters (PT_INTERP, #!)
  std::vector<std::string> allowed_missing;  ///< allowed command names found nowhere
  std::vector<RootEntry> root_entries;       ///< read_host only
  /// Symlinks met while resolving the policy's paths (link path, link text), so that the
  /// spellings of the policy (/bin/sh with /bin -> usr/bin) work inside.
  std::vector<std::pair<std::string, std::string>> links;
  std::vector<std::string> notes;  ///< paths skipped, hard links that cannot be masked
};

/// Resolves everything the layout and the ruleset need, each path once (cordon/path_guard.hpp):
/// a symlink inside a writable directory is never followed. Throws cordon::Error: CRD4007 when
/// the workspace is not an existing directory, CRD4004 when it or a grant passes through a
/// planted symlink, CRD1003 when a blocked path or cordon's own state does.
/// Whom the command runs as on the host: what it could create or reach is judged by it.
struct SandboxUser {
  uid_t uid = ::geteuid();
  std::vector<gid_t> gids;  ///< its groups; empty: cordon's own (getegid and getgroups)
};

/// How the applets of a multi-call program are found (empty: read from the file each time).
using MulticallLookup = std::function<std::vector<std::string>(const std::string& file)>;

HostView gather_host_view(const Plan& plan, const SandboxUser& user = {},
                          const MulticallLookup& applets_of = {});

/// Every existing program file `name` resolves to: itself when it contains '/', else each
/// match in `search_path` (":"-separated), canonical and without duplicates.
std::vector<std::string> resolve_program(const std::string& name, const std::string& search_path);

/// The directories of `search_path` (":"-separated) as they are on the host now: each followed
/// to its real directory, each once, in order; relative and missing ones left out. Looking
/// several names up in them resolves each directory once (/bin and /sbin are symlinks on most
/// hosts).
std::vector<std::string> search_dirs(const std::string& search_path);

/// resolve_program() in directories from search_dirs().
std::vector<std::string> resolve_program(const std::string& name,
                                         const std::vector<std::string>& dirs);

/// With the network allowed, the file a resolver configuration `conf` (/etc/resolv.conf) links
/// to, when name resolution needs it granted: under /run (which read = "host" does not show),
/// or outside the confined read set that holds `conf`'s directory (`read`). Reads the host.
std::optional<HostPath> resolver_file(const std::string& conf, bool read_host,
                                      const std::vector<HostPath>& read);

/// The ELF interpreter (PT_INTERP) of `file`, or the program of its "#!" line; empty if none.
std::string interpreter_of(const std::string& file);

/// The directories cordon searches for blocked programs besides PATH.
const std::string& system_search_path();

}  // namespace cordon::landlock
