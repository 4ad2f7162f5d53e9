// A descriptor closed on scope exit (internal to the core).
#pragma once

#include <unistd.h>

namespace cordon::detail {

/// Owns `fd` (negative: nothing) and closes it when destroyed.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  /// Closes it now.
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

}  // namespace cordon::detail
