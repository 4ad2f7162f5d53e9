// The workspace file API as every backend offers it: read, write, list and remove beneath the
// workspace root, with the policy's size caps and blocked paths. cordon::Workspace (the embedding
// API, <cordon/workspace.hpp>) is this machine's, kept beneath the root by the kernel; a backend
// whose commands run elsewhere (ssh: the remote host) returns its own from
// Backend::do_open_workspace().
//
// The rule for every implementation: a path is relative to the root; `..`, an absolute path and a
// symlink that leads out of the root are refused with CRD4004; a blocked path is CRD4008; any
// other failure is CRD4009; a write replaces the whole file atomically (a temporary file, then a
// rename), so a crash never leaves half a file.
#pragma once

#include <cordon/sdk/export.hpp>

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
  /// cordon's own state, absolute: blocked by name only, since no sandbox can reach it to
  /// make another name for one of its files (a hard link), and it can hold many files.
  std::vector<std::filesystem::path> own_state;
};

/// One directory entry.
struct WorkspaceEntry {
  std::string name;
  enum class Kind { file, directory, symlink, other } kind = Kind::other;
  std::uint64_t size = 0;
};

/// How a write treats a path.
struct WriteOptions {
  /// Create the missing parent directories (mode 0755 less the umask). None on the way may be a
  /// symlink (CRD4004): a link a sandbox planted in the workspace is refused, never followed.
  /// Without it a missing parent is CRD4009.
  bool parents = false;
};

/// The file operations on one workspace. Each throws cordon::Error (CRD4004, CRD4008, CRD4009).
class CORDON_API WorkspaceFiles {
 public:
  virtual ~WorkspaceFiles();

  /// The whole file at `path`; at most max_read_bytes.
  virtual std::string read(std::string_view path) const = 0;
  /// Replaces (or creates) the file at `path` atomically.
  virtual void write(std::string_view path, std::string_view data,
                     WriteOptions options = {}) const = 0;
  /// The entries of the directory at `path` ("" or "." for the root), sorted by name.
  virtual std::vector<WorkspaceEntry> list(std::string_view path) const = 0;
  /// Removes the file, symlink or empty directory at `path`.
  virtual void remove(std::string_view path) const = 0;
};

}  // namespace cordon
