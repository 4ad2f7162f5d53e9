// What cordon's static front end (front/) needs of the landlock backend it builds in, and
// nothing else: the backend's factory and version, and the keeper's head start. The rest of the
// backend stays private to plugins/landlock.
#pragma once

#include <cordon/sdk/backend.hpp>

#include <memory>

namespace cordon::landlock {

/// The backend's version, in its plugin record and as cordon's built-in.
inline constexpr const char* kVersion = "0.1.0";

/// A new landlock backend for `context` (what the plugin's factory makes).
std::unique_ptr<Backend> make_backend(const BackendContext& context);

/// The front end's head start: starts a keeper (the sandbox's pid 1) with a network namespace,
/// what the default policy needs, before the command line is even parsed. Quiet when it
/// cannot: the run then starts its own keeper and reports why that fails.
void prestart_keeper() noexcept;

/// Discards a prestarted keeper nobody took: before the front end hands its command line off
/// (an exec would leave it behind) and when it exits.
void discard_prestarted_keeper() noexcept;

}  // namespace cordon::landlock
