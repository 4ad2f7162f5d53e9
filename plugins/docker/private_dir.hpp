// The backend's state directory, verified before anything in it is written, read or executed:
// held open through O_DIRECTORY|O_NOFOLLOW descriptors from the root down, each level that
// exists owned by root or by cordon's effective uid and not writable by others (unless sticky:
// then no one else can rename cordon's entry), the directory itself owned by cordon's effective
// uid and writable by no one else, every level cordon makes created mode 0700. A directory
// another user made (planted at the path before cordon) is refused, never reused. Files are
// opened relative to the held descriptor, never through a symlink.
//
// A private stand-in for the core's private-directory utility (issue 27, §1), with the same
// checks; to be replaced by it.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "held_fd.hpp"

namespace cordon::docker {

/// A verified directory of cordon's own, held open.
class PrivateDir {
 public:
  /// Opens `path` (absolute), making each missing level mode 0700, and verifies every level.
  /// Throws CRD1003 naming the level that is not cordon's (its owner, or that it is a symlink
  /// or writable by others).
  static PrivateDir open(const std::filesystem::path& path);

  /// The subdirectory `name` (one component), made and verified the same way.
  PrivateDir sub(const std::string& name) const;

  const std::filesystem::path& path() const { return path_; }
  int fd() const { return held_->fd(); }

  /// `name` (one component) opened relative to this directory with `flags` | O_NOFOLLOW |
  /// O_CLOEXEC; -1 with errno when it cannot be (ELOOP for a symlink).
  int open_file(const std::string& name, int flags, int mode = 0) const;

  /// Writes `bytes` to a fresh file (O_EXCL, `mode`) and renames it to `name`, replacing what
  /// was there. Throws CRD1003.
  void replace_file(const std::string& name, std::string_view bytes, int mode) const;

 private:
  PrivateDir(std::filesystem::path path, std::shared_ptr<const HeldFd> held)
      : path_(std::move(path)), held_(std::move(held)) {}

  std::filesystem::path path_;
  std::shared_ptr<const HeldFd> held_;
};

}  // namespace cordon::docker
