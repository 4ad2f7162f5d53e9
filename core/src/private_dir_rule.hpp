// The trust rule of cordon's own directories (internal; see cordon/private_dir.hpp).
#pragma once

#include <sys/types.h>
#include <cordon/sdk/export.hpp>

#include <optional>
#include <string>

namespace cordon::detail {

/// What a directory on the way to a PrivateDir must be.
enum class Trust {
  ancestor,  ///< root's or cordon's, writable by neither group nor others (but root's sticky)
  own,       ///< cordon's effective uid's, writable by neither group nor others
};

/// Why a file of `mode` owned by `owner` fails `trust` for a cordon running as `euid` ("is
/// owned by uid 1001, neither root nor cordon's uid 0"); nullopt when it passes. Pure.
CORDON_API std::optional<std::string> untrusted_reason(uid_t owner, mode_t mode, uid_t euid,
                                                       Trust trust);

}  // namespace cordon::detail
