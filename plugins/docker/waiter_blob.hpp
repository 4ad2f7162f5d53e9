// The waiter program (waiter.c, every container's pid 1), built static and embedded in the plugin
// (its copy on the host: verified_file.hpp), and its input and trailer.
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

/// Bytes of the nonce that starts the waiter's input and its exit trailer.
inline constexpr std::size_t kNonceSize = 16;
/// The exit trailer: the nonce and a 4-byte big-endian status, the last bytes of stdout and of
/// stderr.
inline constexpr std::size_t kTrailerSize = kNonceSize + 4;

/// Trailer statuses above any exit status. A check the waiter made before the exec and that
/// failed: + the index of the check (bits 0-15) and, for a failed stat, its errno (bits 16-23).
inline constexpr std::uint32_t kMountMismatch = 0x01000000;
inline constexpr std::uint32_t kMountUnreadable = 0x02000000;
/// The waiter's uid (bit 0), gid (bit 1) or a supplementary group (bit 2) is 0: nothing ran.
inline constexpr std::uint32_t kRootIdentity = 0x03000000;
/// The target is reached through a symlink in the container.
inline constexpr std::uint32_t kMountThroughLink = 0x04000000;
/// The waiter killed every process of the container at the deadline it was given.
inline constexpr std::uint32_t kDeadline = 0x05000000;
/// The waiter runs with another uid than the one it was told to expect: nothing ran.
inline constexpr std::uint32_t kOtherUid = 0x06000000;
/// The kind of a trailer status (its top byte).
inline constexpr std::uint32_t kStatusKind = 0xff000000;

/// The most checks, and the longest target, the waiter reads (waiter.c's kMaxChecks, kMaxTarget).
inline constexpr std::size_t kMaxWaiterChecks = 4096;
inline constexpr std::size_t kMaxWaiterTarget = 4096;

/// One check of the waiter: stat(target) in the container must give this device and inode.
struct WaiterCheck {
  std::string target;
  std::uint64_t dev = 0;
  std::uint64_t ino = 0;
};

/// What the waiter is told before the command.
struct WaiterInput {
  std::string nonce;           ///< kNonceSize bytes
  bool stdin_follows = false;  ///< else the command's stdin is /dev/null
  /// Milliseconds from when the waiter reads this to the run's deadline, at which it kills every
  /// process of the container itself; 0: no deadline.
  std::uint64_t deadline_ms = 0;
  /// The uid the waiter must have (a user the image names, whose host state cordon hid).
  std::optional<std::uint32_t> uid;
  std::vector<WaiterCheck> checks;
  std::vector<std::string> argv;
};

/// The waiter's input (big-endian integers): the nonce (kNonceSize bytes); flags (bit 0: stdin
/// follows); the deadline in milliseconds (8 bytes); the count of checks, each the target with
/// its length, the device and the inode (8 bytes each); the count of arguments, each with its
/// length. Pure.
std::string waiter_header(const WaiterInput& in);

/// The status in `tail` (the last kTrailerSize bytes of a stream) when it is the waiter's
/// trailer for `nonce`. Pure.
std::optional<std::int64_t> trailer_status(std::string_view tail, const std::string& nonce);

}  // namespace cordon::docker
