// Policy paths beneath writable directories, for backends that resolve them on the host.
//
// In the workspace or a write path the command (or an agent before it) may have planted a
// symlink. A grant there must not follow one out: `{workspace}/out -> ~/.ssh` granted for writing
// would hand the command the caller's keys. Backends call this before they resolve a policy path.
#pragma once

#include <cordon/export.hpp>

#include <string>
#include <vector>

namespace cordon {

/// Throws Error CRD4004 when `path` (absolute, lexically normal) lies strictly beneath one of
/// `bases` and reaches its target through a symlink below that base (checked with openat2
/// RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS). A path that does not exist, or is not beneath any base,
/// passes.
CORDON_API void refuse_planted_symlink(const std::string& path,
                                       const std::vector<std::string>& bases);

/// An O_PATH descriptor (close-on-exec) of the absolute `path`, opened only if no component is a
/// symlink (openat2 RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS): what it names is then exactly
/// the path as written. -1 with errno otherwise (ELOOP for a symlink on the way).
CORDON_API int open_without_symlinks(const std::string& path) noexcept;

}  // namespace cordon
