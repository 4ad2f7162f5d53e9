// The pool's waiter program (waiter.c), built static and embedded in the plugin, and the host
// file it is written to so that the daemon can bind-mount it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::docker {

/// Where the waiter sits inside a pooled container.
inline constexpr const char* kWaiterTarget = "/.cordon-waiter";

/// The waiter's bytes.
std::string_view waiter_program();

/// Writes the waiter (once, mode 0555) under `dir` and returns its path. Throws CRD1003.
std::string ensure_waiter(const std::filesystem::path& dir);

/// Bytes of the nonce that starts the waiter's input and its exit trailer.
inline constexpr std::size_t kNonceSize = 16;
/// The exit trailer: the nonce and a 4-byte big-endian status, the last bytes of stdout and of
/// stderr.
inline constexpr std::size_t kTrailerSize = kNonceSize + 4;

/// The waiter's input for `argv`: the nonce (kNonceSize bytes), a count, then each argument
/// with its length (big-endian).
std::string waiter_header(const std::string& nonce, const std::vector<std::string>& argv);

/// The status in `tail` (the last kTrailerSize bytes of a stream) when it is the waiter's
/// trailer for `nonce`. Pure.
std::optional<std::int64_t> trailer_status(std::string_view tail, const std::string& nonce);

}  // namespace cordon::docker
