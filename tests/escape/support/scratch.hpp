// A per-test scratch tree on the host, created by whichever user runs the suite:
//
//   <root>/            0755, the parent of the workspace
//     ws/              the workspace (--workspace); owned by the sandbox's user when we are root
//     listed/ok.txt    a directory every test policy lists in filesystem.read
//     unlisted/secret.txt   a directory no policy lists
//     ro/file.txt      listed for reading only: writes, renames, truncation and chmod must fail
//     policies/        policy files written by the tests
#pragma once

#include <sys/types.h>

#include <string>

namespace escape {

/// Content of the files the layout starts with, so a test can tell whether a secret leaked.
inline constexpr const char* kListedContent = "listed-content-0b7e";
inline constexpr const char* kSecretContent = "unlisted-secret-5d21";
inline constexpr const char* kReadOnlyContent = "read-only-content-91c3";

/// The scratch tree of one test; removed (as far as we can) when destroyed.
class Scratch {
 public:
  Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch();

  const std::string& root() const { return root_; }
  std::string ws() const { return root_ + "/ws"; }
  std::string listed() const { return root_ + "/listed"; }
  std::string unlisted() const { return root_ + "/unlisted"; }
  std::string ro() const { return root_ + "/ro"; }
  std::string path(const std::string& rel) const { return root_ + "/" + rel; }

  /// Writes `content` to `path` (absolute), creating parent directories, with `mode`.
  void write(const std::string& path, const std::string& content, mode_t mode = 0644) const;
  /// The content of `path`, or "<missing>" when it cannot be read.
  std::string read(const std::string& path) const;
  /// Creates a directory (and parents) with `mode`.
  void mkdir(const std::string& path, mode_t mode = 0755) const;
  /// Gives `path` to the uid the sandboxed command runs as on the host (see sandbox_uid()).
  void give_to_sandbox(const std::string& path) const;
  /// Writes a policy file under policies/ and returns its path.
  std::string policy_file(const std::string& toml);

 private:
  std::string root_;
  int policies_ = 0;
};

/// Whether the suite runs as root.
bool running_as_root();

/// The host uid that owns workspaces when the suite runs as root: CORDON_ESCAPE_SANDBOX_UID,
/// else the test user's uid, else 65534. As a normal user: our own uid.
uid_t sandbox_uid();

/// The file mode bits of `path` (07777), or -1 when it cannot be stat'ed.
int file_mode(const std::string& path);

/// Whether `path` exists (lstat).
bool exists(const std::string& path);

}  // namespace escape
