// An open descriptor shared by the things that hold it, closed when the last one goes away.
#pragma once

#include <unistd.h>

namespace cordon::docker {

/// An open descriptor, closed on destruction; -1 holds nothing.
class HeldFd {
 public:
  explicit HeldFd(int fd) : fd_(fd) {}
  ~HeldFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  HeldFd(const HeldFd&) = delete;
  HeldFd& operator=(const HeldFd&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

}  // namespace cordon::docker
