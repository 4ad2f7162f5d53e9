// cordon's own directories: created by cordon, or verified to be its own, and held open.
//
// Everything cordon (or a backend, or a job supervisor) writes on the host — job state, backend
// state, caches, logs — lives in a PrivateDir. Running as root, cordon must never create, write
// or read through a path that another user can change, so a PrivateDir is reached from "/" one
// level at a time through O_DIRECTORY|O_NOFOLLOW descriptors (no level can be a symlink) and
// every level is checked on the descriptor it was opened as, never by resolving its name again:
//   - a level that exists above the directory (an ancestor) must be owned by root or by
//     cordon's effective uid and not writable by its group or others — except a root-owned
//     sticky directory such as /tmp or /var/tmp, where others may create entries but not move
//     or remove ours: its child must then pass the same rule, i.e. be root's or cordon's own;
//   - a missing level is created by cordon, mode 0700;
//   - the directory itself must be owned by cordon's effective uid and not writable by its
//     group or others; create() also takes away any read or search bits of group and others.
// A level that fails is refused with CRD1006 naming it: it is never reused, re-permitted or
// removed. Files are opened relative to the held descriptor, one name at a time, with
// O_NOFOLLOW (and O_EXCL when created), and must be regular files owned by cordon's uid.
// The rule is OpenSSH's safe-path check, applied at every level.
#pragma once

#include <sys/types.h>
#include <unistd.h>
#include <cordon/sdk/export.hpp>
#include <cordon/sdk/owned_fd.hpp>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cordon {

/// A directory that is cordon's own (see the rules above), held open. Every name passed to a
/// member is one path component ("job.json"; never "a/b", "." or ".."), else CRD5006.
/// Errors: CRD1006 when something is not cordon's own (owner, permissions, a symlink, not a
/// directory or regular file), CRD5006 when an operation fails (no space, permission denied).
class CORDON_API PrivateDir {
 public:
  /// Opens `path` (absolute), creating every missing level with mode 0700. Throws Error.
  static PrivateDir create(const std::filesystem::path& path);
  /// Opens `path` (absolute) when it exists, creating nothing; nullopt when a level is
  /// missing. Throws Error for a level that exists and is not trusted.
  static std::optional<PrivateDir> open(const std::filesystem::path& path);

  /// The child directory `name`, created with mode 0700 when missing. Throws Error.
  PrivateDir subdir(std::string_view name) const;
  /// The child directory `name` when it exists; nullopt otherwise. Throws Error.
  std::optional<PrivateDir> open_subdir(std::string_view name) const;

  /// Creates the file `name` (O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC plus `flags`, e.g. O_WRONLY
  /// or O_RDWR|O_APPEND) with `mode`. An existing entry of that name is an error. Throws Error.
  OwnedFd create_file(std::string_view name, int flags, mode_t mode = 0600) const;
  /// Opens the existing regular file `name` (O_NOFOLLOW|O_CLOEXEC plus `flags`, no O_CREAT),
  /// owned by cordon's uid. An empty OwnedFd when there is no such entry. Throws Error.
  OwnedFd open_file(std::string_view name, int flags) const;
  /// Replaces the file `name` atomically with `data` (a new file created with O_EXCL, written,
  /// fsynced, renamed over it), mode `mode`. Throws Error.
  void write_file(std::string_view name, std::string_view data, mode_t mode = 0600) const;
  /// The contents of the regular file `name`, or nullopt when there is none. A file larger
  /// than `max_bytes` is an error. Throws Error.
  std::optional<std::string> read_file(std::string_view name,
                                       std::size_t max_bytes = 16u << 20) const;
  /// Renames the entry `from` to `to` within this directory, replacing `to`. Throws Error.
  void rename(std::string_view from, std::string_view to) const;
  /// Removes the entry `name` — a file, or a directory with everything in it — without ever
  /// following a symlink. False when there was no such entry. Throws Error.
  bool remove(std::string_view name) const;
  /// The names in this directory (without "." and ".."), unsorted. Throws Error.
  std::vector<std::string> entries() const;

  /// The directory's descriptor (O_RDONLY|O_DIRECTORY, close-on-exec), owned by this object.
  int fd() const noexcept { return fd_.get(); }
  /// The path it was opened as, for messages and display.
  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  PrivateDir(OwnedFd fd, std::filesystem::path path);
  OwnedFd fd_;
  std::filesystem::path path_;
};

}  // namespace cordon
