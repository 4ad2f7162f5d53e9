// The identity (device, inode) of every bind mount's source, recorded when cordon checks it on
// the host, and the checks the waiter makes with them inside the container before the command
// runs. The daemon resolves a source path again when it starts the container, following
// symlinks as root: a source swapped in between is caught by its identity, and the run refused.
#pragma once

#include <cordon/error.hpp>

#include <boost/json/object.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "container_spec.hpp"
#include "waiter_blob.hpp"

namespace cordon::docker {

/// A host file as stat() gives it on both sides of a bind mount.
struct SourceIdentity {
  std::uint64_t dev = 0;
  std::uint64_t ino = 0;
  bool directory = false;
  std::string host_path;  ///< the symlink-free path it was opened at
};

/// Bind sources, as the create body names them, and their identities.
using SourceIdentities = std::map<std::string, SourceIdentity>;

/// A source to identify and whether it may contain symlinks of its own (see source_identity).
struct SourceToIdentify {
  std::string path;
  bool configured = true;
};

/// Every source a run's container binds: the host mounts (host_mounts()), the empty masks and
/// the waiter. The blocked-path and program masks all come from the two mask files. Pure.
std::vector<SourceToIdentify> sources_to_identify(const std::vector<HostMount>& mounts,
                                                  const std::string& mask_file,
                                                  const std::string& mask_dir,
                                                  const std::string& waiter);

/// The identity of `source`, from one openat2(O_PATH, RESOLVE_NO_SYMLINKS) and fstat of that fd.
/// A `configured` path (given by the caller or the operator: the workspace, an operator mount,
/// HOME, cordon's state directory) may hold symlinks the caller meant: it is made canonical
/// first. A path cordon resolved itself (a filesystem.write path, already canonical) must still
/// be free of symlinks: one now was swapped in since, and is refused (CRD4004). CRD1003 when it
/// cannot be opened.
SourceIdentity source_identity(const SourceToIdentify& source);

/// source_identity() of each.
SourceIdentities identify_sources(const std::vector<SourceToIdentify>& sources);

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
