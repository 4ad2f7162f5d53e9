// The workspace file API: reads and writes that the kernel keeps beneath the workspace.
//
// Every path is resolved with openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS) from a
// descriptor of the workspace, so `..`, absolute paths and symlinks that point out — including
// one swapped in while an operation runs — fail with CRD4004. Writes are atomic: a temporary
// file in the same directory, then rename, so a crash never leaves half a file.
#pragma once

#include <cordon/error.hpp>
#include <cordon/export.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace cordon {

/// Caps and refusals that come from the policy.
struct WorkspaceRules {
  std::uint64_t max_read_bytes = 64ull * 1024 * 1024;
  std::uint64_t max_write_bytes = 64ull * 1024 * 1024;
  std::vector<std::filesystem::path> blocked;  ///< absolute, expanded (filesystem.blocked)
};

/// One directory entry.
struct WorkspaceEntry {
  std::string name;
  enum class Kind { file, directory, symlink, other } kind = Kind::other;
  std::uint64_t size = 0;
};

/// A handle on one workspace directory. Not copyable; the directory descriptor is held open.
class CORDON_API Workspace {
 public:
  /// Opens `root` (must be an existing directory). Throws Error CRD4004 otherwise.
  explicit Workspace(const std::filesystem::path& root, WorkspaceRules rules = {});
  ~Workspace();
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  /// The whole file at `path` (relative to the workspace); at most max_read_bytes.
  std::string read(std::string_view path) const;
  /// Replaces (or creates) the file at `path` atomically; the parent directory must exist.
  void write(std::string_view path, std::string_view data) const;
  /// The entries of the directory at `path` ("" or "." for the workspace itself), sorted.
  std::vector<WorkspaceEntry> list(std::string_view path) const;
  /// Removes the file, symlink or empty directory at `path`.
  void remove(std::string_view path) const;

  const std::filesystem::path& root() const noexcept { return root_; }

 private:
  int open_beneath(std::string_view path, int flags, std::uint64_t mode = 0) const;
  int open_parent(std::string_view path, std::string& leaf) const;
  /// Throws CRD4008 when what `fd` names (or its entry `leaf`, when given) is blocked.
  void refuse_blocked(int fd, std::string_view path, std::string_view leaf = {}) const;

  std::filesystem::path root_;
  WorkspaceRules rules_;
  int dirfd_ = -1;
};

}  // namespace cordon
