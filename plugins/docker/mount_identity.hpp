// Every bind mount's source, opened once on the host without following any symlink and held open
// for the whole run, its identity (device, inode) taken from that descriptor, and the checks the
// waiter makes with them inside the container before the command runs. The daemon resolves a
// source path again when it starts the container, following symlinks as root: whatever it
// mounted must be the object cordon holds, or the run is refused. Held open, that object's
// inode cannot be freed and reused by another file while the run lasts.
#pragma once

#include <cordon/sdk/error.hpp>

#include <boost/json/object.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "container_spec.hpp"
#include "held_fd.hpp"
#include "waiter_blob.hpp"

namespace cordon::docker {

/// A host file as fstat() of the descriptor cordon holds gives it; stat() in the container
/// gives the same device and inode through a bind mount of it.
struct SourceIdentity {
  std::uint64_t dev = 0;
  std::uint64_t ino = 0;
  bool directory = false;
  std::string host_path;  ///< the symlink-free path it was opened at
  std::uint32_t uid = 0;  ///< its owner and group (the workspace's choose the default user)
  std::uint32_t gid = 0;
  std::shared_ptr<const HeldFd> held;  ///< the source itself (O_PATH), open while the run lasts
};

/// Bind sources, as the create body names them, and their identities.
using SourceIdentities = std::map<std::string, SourceIdentity>;

/// A source to identify, and what it is for the messages ("workspace", "filesystem.write", ...).
struct SourceToIdentify {
  std::string path;
  std::string why;
};

/// Every source a run's container binds: the host mounts (host_mounts()), the empty masks and
/// the waiter. The blocked-path and program masks all come from the two mask files. Pure.
std::vector<SourceToIdentify> sources_to_identify(const std::vector<HostMount>& mounts,
                                                  const std::string& mask_file,
                                                  const std::string& mask_dir,
                                                  const std::string& waiter);

/// `source` opened once with openat2(O_PATH, RESOLVE_NO_SYMLINKS), held, and its identity from
/// fstat of that descriptor. Never resolved again, never made canonical: a path that passes
/// through a symlink (the workspace, a write path, an operator mount, HOME alike) is refused
/// (CRD4004, naming the link and its target); the daemon would follow it as root, and whoever
/// controls the link would choose what is mounted. CRD1003 when it cannot be opened otherwise.
SourceIdentity source_identity(const SourceToIdentify& source);

/// The identity of open descriptor `fd` (taken over: held by the result) found at `path`.
/// Throws CRD1003 when fstat fails.
SourceIdentity identity_of_fd(int fd, const std::string& path);

/// source_identity(), or nullopt when the source does not exist.
std::optional<SourceIdentity> existing_source_identity(const SourceToIdentify& source);

/// source_identity() of each source not in `held` yet, added to it.
void identify_sources(const std::vector<SourceToIdentify>& sources, SourceIdentities& held);

/// The first symlink on the way to `path` ("'/a/b' -> 'target'"), or empty when there is none
/// now. For messages only: nothing is decided on it.
std::string first_symlink(const std::string& path);

/// One check of the waiter, and what it is about (for the refusal's message).
struct MountCheck {
  WaiterCheck check;
  std::string source;  ///< the bind's source, as the create body names it
  SourceIdentity expected;
};

/// A check for every bind of `body` (HostConfig.Mounts), in its order. Throws CRD5003 for a
/// bind whose source was not identified (every source cordon binds must be), CRD1003 for more
/// binds or a longer target than the waiter reads. Pure.
std::vector<MountCheck> mount_checks(const boost::json::object& body,
                                     const SourceIdentities& identities);

/// The waiter's part of `checks`. Pure.
std::vector<WaiterCheck> waiter_checks(const std::vector<MountCheck>& checks);

/// The refusal for a waiter status that reports a failed check: CRD4004 when a mount is not
/// what cordon checked, CRD1003 when the waiter could not stat it; nullopt for a command's own
/// status. Pure.
std::optional<Error> check_failure(std::int64_t status, const std::vector<MountCheck>& checks);

}  // namespace cordon::docker
