// Files cordon copies into its state directory and later runs or mounts (the waiter): checked
// by content, SHA-256 against the bytes built into cordon, before every use, never by size or
// name. A file that differs is replaced, and checked again.
#pragma once

#include <cordon/sdk/private_dir.hpp>

#include <optional>
#include <string>
#include <string_view>

#include "mount_identity.hpp"

namespace cordon::docker {

/// The SHA-256 of `bytes`, as 64 lowercase hex digits.
std::string sha256_hex(std::string_view bytes);

/// The SHA-256 of what `fd` holds, read from offset 0; nullopt when it cannot be read.
std::optional<std::string> sha256_of_fd(int fd);

/// The file `name` of `dir` holding exactly `bytes`, mode `mode` (no write bit), owned by
/// cordon's effective uid, a regular file with one link: opened without following a symlink and
/// hashed; when it is not so, it is replaced and checked again. Returns it held open, its
/// identity from that descriptor (the bind mount of it is checked against it in the container).
/// Throws CRD1003 when it cannot be made so.
SourceIdentity verified_copy(const PrivateDir& dir, const std::string& name, std::string_view bytes,
                             int mode);

/// The waiter's copy in `dir` (waiter_program(), mode 0555, named after its digest), through
/// verified_copy(): checked before every use.
SourceIdentity ensure_waiter(const PrivateDir& dir);

}  // namespace cordon::docker
