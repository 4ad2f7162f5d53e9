// A file descriptor owned by one object, closed when it goes.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>

namespace cordon::landlock {

/// Owns one descriptor; -1 when empty. Move-only.
class UniqueFd {
 public:
  UniqueFd() noexcept = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(std::exchange(other.fd_, -1));
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const noexcept { return fd_; }
  explicit operator bool() const noexcept { return fd_ >= 0; }
  /// Gives up ownership without closing.
  int release() noexcept { return std::exchange(fd_, -1); }
  /// Closes the current descriptor (if any) and owns `fd`.
  void reset(int fd = -1) noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

/// A pipe whose both ends are close-on-exec.
struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

/// Opens a pipe with O_CLOEXEC on both ends; throws cordon::Error (CRD1003) on failure.
Pipe make_pipe();

/// The first `cap` bytes of a small file (/proc, /sys, cgroupfs) with plain reads; nullopt when
/// it cannot be opened.
inline std::optional<std::string> read_text(const std::string& path,
                                            std::size_t cap = std::string::npos) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return std::nullopt;
  std::string text;
  char buf[8192];
  while (text.size() < cap) {
    ssize_t n = ::read(fd.get(), buf, std::min(sizeof buf, cap - text.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  return text;
}

}  // namespace cordon::landlock
