// The waiter program (waiter.c, every container's pid 1), built static and embedded in the plugin,
// and the host file it is written to so that the daemon can bind-mount it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::docker {

/// Where the waiter sits inside a container (every run's, pooled or one-shot).
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

/// Trailer statuses of a check the waiter made before the exec and that failed, above any exit
/// status: + the index of the check (bits 0-15) and, for a failed stat, its errno (bits 16-23).
inline constexpr std::uint32_t kMountMismatch = 0x01000000;
inline constexpr std::uint32_t kMountUnreadable = 0x02000000;

/// The most checks, and the longest target, the waiter reads (waiter.c's kMaxChecks, kMaxTarget).
inline constexpr std::size_t kMaxWaiterChecks = 4096;
inline constexpr std::size_t kMaxWaiterTarget = 4096;

/// One check of the waiter: stat(target) in the container must give this device and inode.
struct WaiterCheck {
  std::string target;
  std::uint64_t dev = 0;
  std::uint64_t ino = 0;
};

/// The waiter's input (big-endian integers): the nonce (kNonceSize bytes); flags (bit 0: stdin
/// follows, else the command's stdin is /dev/null); the count of checks, each the target with its
/// length, the device and the inode (8 bytes each); the count of arguments, each with its length.
std::string waiter_header(const std::string& nonce, bool stdin_follows,
                          const std::vector<WaiterCheck>& checks,
                          const std::vector<std::string>& argv);

/// The status in `tail` (the last kTrailerSize bytes of a stream) when it is the waiter's
/// trailer for `nonce`. Pure.
std::optional<std::int64_t> trailer_status(std::string_view tail, const std::string& nonce);

}  // namespace cordon::docker
