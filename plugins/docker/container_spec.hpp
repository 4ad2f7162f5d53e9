// Policy -> the body of POST /containers/create: every clause mapped to a daemon setting, the
// host mounted only where the policy lets the command write (or the operator said so), and
// blocked paths inside those mounts masked. Pure: host facts are gathered beforehand.
#pragma once

#include <cordon/sdk/backend.hpp>

#include <boost/json/object.hpp>

#include <string>
#include <vector>

#include "seccomp_profile.hpp"
#include "settings.hpp"

namespace cordon::docker {

/// HOME inside the container when it is private.
inline constexpr const char* kPrivateHome = "/home/cordon";

/// A host path the container sees, and where.
struct HostMount {
  std::string source;
  std::string target;
  bool writable = false;
  std::string why;  ///< "workspace", "filesystem.write", "backends.docker.mounts", "home"
};

/// A blocked host path as it is on the host right now.
struct BlockedPath {
  std::string path;
  bool exists = false;
  bool directory = false;
};

/// What the host side established before the spec is made.
struct SpecInput {
  const Plan& plan;
  const Settings& settings;
  std::string run_id;
  std::string user;                    ///< "uid:gid" or a name: never root
  std::vector<std::string> image_env;  ///< the image's own ENV ("K=V")
  /// The run's mounts: host_mounts() and the pins_for() the masked paths in them.
  std::vector<HostMount> mounts;
  std::vector<BlockedPath> blocked;
  std::string mask_file;                ///< an empty mode-000 root-owned file on the host
  std::string mask_dir;                 ///< an empty mode-000 root-owned directory on the host
  std::vector<std::string> labels;      ///< extra "key=value" labels (pid, host)
  std::vector<std::string> exec_masks;  ///< the image's blocked program files (container paths)
  /// Blocked program files on the host mounts (container paths; mounted_programs.hpp).
  std::vector<std::string> mount_exec_masks;
  /// cordon's seccomp profile for the daemon's architecture; null only in unit tests (the
  /// daemon's default profile then applies).
  std::shared_ptr<const SeccompProfile> seccomp;
  /// cordon's own state (Plan::protected_paths) that exists on the host: hidden wherever a
  /// mount would show it, whatever the policy grants.
  std::vector<BlockedPath> own_state;
};

/// The create body and what it put in place, for the enforcement report.
struct ContainerSpec {
  boost::json::object body;
  std::vector<HostMount> mounts;
  std::vector<std::string> masked;             ///< container paths masked (blocked paths)
  std::vector<std::string> hidden;             ///< container paths of cordon's own state masked
  std::vector<std::string> exec_masked;        ///< the image's blocked program files masked
  std::vector<std::string> mount_exec_masked;  ///< blocked program files on host mounts masked
  std::vector<std::string> removed_env;        ///< image ENV names removed because not granted
  std::string home;
  bool private_tmp = true;    ///< false when a host mount is /tmp (a write grant of the host's)
  bool private_home = false;  ///< HOME is a private tmpfs
  std::int64_t pids_limit = 0;
  std::string seccomp;  ///< the profile's summary; empty when the daemon's default applies
};

/// The host mounts of a plan: the workspace (same path, rw), the write paths, the operator's
/// extra mounts, and the host's HOME when filesystem.home = host. Pure.
std::vector<HostMount> host_mounts(const Plan& plan, const Settings& settings,
                                   const std::vector<std::string>& write_paths);

/// Where each blocked path falls inside a mount: the container paths to mask. Pure.
std::vector<std::pair<std::string, bool>> masks_for(const std::vector<HostMount>& mounts,
                                                    const std::vector<BlockedPath>& blocked);

/// What a pin is for, in HostMount::why.
inline constexpr const char* kPinWhy = "pin of a masked path";

/// The directories between a writable mount's root and each existing path of `masked` in it
/// (blocked paths, cordon's own state), each bound onto itself: a mount point, which the
/// command cannot rename or remove (EBUSY). Renaming one would move the masked file away from
/// the path the policy names, and a later run would find it unmasked elsewhere. Mounts that are
/// there already are not pinned again, nor is a directory inside a masked one. Pure.
std::vector<HostMount> pins_for(const std::vector<HostMount>& mounts,
                                const std::vector<BlockedPath>& masked);

/// Throws CRD4004 when a mount's source is one of cordon's own state directories or lies in one
/// (`own_state`: Plan::protected_paths, lexically normal): it cannot be hidden from the command
/// without hiding the whole mount. Pure.
void refuse_mounts_of_own_state(const std::vector<HostMount>& mounts,
                                const std::vector<std::string>& own_state);

/// The whole create body. Pure. Throws CRD1003 when a host mount is the private HOME, which
/// the HOME tmpfs would hide.
ContainerSpec make_spec(const SpecInput& in);

}  // namespace cordon::docker
