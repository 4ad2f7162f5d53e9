// A file descriptor owned by one object, closed when it goes: what cordon's own code and its
// backends hold descriptors in; and the plain read of a small file through one (with the one
// /proc question cordon's code and its test helper both ask: has a process ended?); and the
// closing of the descriptors a forked child inherited.
#pragma once

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>

namespace cordon {

/// Owns one file descriptor (-1: none) and closes it when destroyed. Move-only.
class OwnedFd {
 public:
  OwnedFd() noexcept = default;
  explicit OwnedFd(int fd) noexcept : fd_(fd) {}
  OwnedFd(OwnedFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  OwnedFd& operator=(OwnedFd&& other) noexcept {
    if (this != &other) reset(std::exchange(other.fd_, -1));
    return *this;
  }
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;
  ~OwnedFd() { reset(); }

  int get() const noexcept { return fd_; }
  explicit operator bool() const noexcept { return fd_ >= 0; }
  /// Gives the descriptor up without closing it.
  int release() noexcept { return std::exchange(fd_, -1); }
  /// Closes the current descriptor, if any, and owns `fd`.
  void reset(int fd = -1) noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

/// The first `cap` bytes of a small file (/proc, /sys, cgroupfs) with plain reads; nullopt when
/// it cannot be opened.
inline std::optional<std::string> read_text(const std::string& path,
                                            std::size_t cap = std::string::npos) {
  OwnedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
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

/// True when `pid` is a zombie: it has ended and only waits for its parent (SIGKILL cannot end
/// it further). False when it runs, or is gone.
inline bool is_zombie(int pid) {
  auto stat = read_text("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return false;
  auto paren = stat->rfind(')');
  return paren != std::string::npos && paren + 2 < stat->size() && (*stat)[paren + 2] == 'Z';
}

/// Closes every descriptor from 3 up but the `n` in `keep` (sorted here; negative ones are
/// ignored). For a process forked or cloned from cordon, which holds copies of all of cordon's
/// descriptors, among them another thread's file open for writing: no one could execute that
/// file while the copy lives (ETXTBSY). Raw system calls only: async-signal-safe.
inline void close_all_but(int* keep, std::size_t n) noexcept {
  for (std::size_t i = 1; i < n; ++i)
    for (std::size_t j = i; j > 0 && keep[j - 1] > keep[j]; --j) {
      int t = keep[j];
      keep[j] = keep[j - 1];
      keep[j - 1] = t;
    }
  auto close_range = [](unsigned first, unsigned last) {
    if (::syscall(SYS_close_range, first, last, 0U) == 0 || errno != ENOSYS) return;
    for (unsigned fd = first; fd <= last && fd < 65536; ++fd) ::close(static_cast<int>(fd));
  };
  unsigned from = 3;
  for (std::size_t i = 0; i < n; ++i) {
    if (keep[i] < 0 || static_cast<unsigned>(keep[i]) < from) continue;
    auto fd = static_cast<unsigned>(keep[i]);
    if (fd > from) close_range(from, fd - 1);
    from = fd + 1;
  }
  close_range(from, ~0U);
}

}  // namespace cordon
