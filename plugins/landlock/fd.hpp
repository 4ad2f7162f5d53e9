// A file descriptor owned by one object, closed when it goes.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cordon/sdk/owned_fd.hpp>

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

/// The first `cap` bytes of a small file (cordon/owned_fd.hpp).
using ::cordon::read_text;

}  // namespace cordon::landlock
