// The `none` backend, built into the core: a plain child process with rlimits, a granted
// environment, a private HOME and a deadline that kills the whole process tree — and nothing
// else. It proves no filesystem, network or process isolation, so it is refused for any policy
// that asks for them, and it is never chosen unless named.
#pragma once

#include <cordon/sdk/backend.hpp>
#include <cordon/sdk/export.hpp>

#include <chrono>
#include <memory>

namespace cordon {

/// How long a command may take to exit after SIGTERM at its deadline before SIGKILL.
inline constexpr std::chrono::milliseconds kNoneKillGrace{1000};

/// Creates the `none` backend (the registry does this for the name "none").
CORDON_API std::unique_ptr<Backend> make_none_backend(BackendContext context);

}  // namespace cordon
