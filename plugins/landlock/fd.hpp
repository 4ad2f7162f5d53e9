// A file descriptor owned by one object, closed when it goes.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cordon/owned_fd.hpp>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>

namespace cordon::landlock {

/// Owns one descriptor; -1 when empty. Move-only.
using UniqueFd = ::cordon::OwnedFd;

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
