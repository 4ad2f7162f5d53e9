// A file descriptor owned by one object, closed when it goes.
#pragma once

#include <unistd.h>

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

}  // namespace cordon::landlock
