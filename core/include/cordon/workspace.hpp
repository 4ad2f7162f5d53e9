// The workspace file API: reads and writes that the kernel keeps beneath the workspace.
//
// Every path is resolved with openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS) from a
// descriptor of the workspace, so `..`, absolute paths and symlinks that point out — including
// one swapped in while an operation runs — fail with CRD4004. Writes are atomic: a temporary
// file in the same directory, then rename, so a crash never leaves half a file. A write replaces
// the contents, not who may use the file: the replaced file's permission bits (and, when cordon
// runs as root, its owner) carry over, so a sandboxed command can still append to its own file.
#pragma once

#include <sys/stat.h>

#include <cordon/sdk/error.hpp>
#include <cordon/sdk/export.hpp>
#include <cordon/sdk/workspace_files.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace cordon {

/// A handle on one workspace directory. Not copyable; the directory descriptor is held open.
class CORDON_API Workspace final : public WorkspaceFiles {
 public:
  /// Opens `root` (must be an existing directory). Throws Error CRD4004 otherwise.
  explicit Workspace(const std::filesystem::path& root, WorkspaceRules rules = {});
  ~Workspace() override;
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  /// The whole file at `path` (relative to the workspace); at most max_read_bytes.
  std::string read(std::string_view path) const override;
  /// Replaces (or creates) the file at `path` atomically; the parent directory must exist unless
  /// `options.parents`. A replaced regular file keeps its permission bits, less set-user-ID and
  /// set-group-ID (new contents never run as someone else), and, when cordon runs as root, its
  /// owner and group. A new file gets 0644 less the umask; as root, the new file and every
  /// directory created for it get the owner and group of the workspace directory.
  void write(std::string_view path, std::string_view data,
             WriteOptions options = {}) const override;
  /// The entries of the directory at `path` ("" or "." for the workspace itself), sorted.
  std::vector<WorkspaceEntry> list(std::string_view path) const override;
  /// Removes the file, symlink or empty directory at `path`.
  void remove(std::string_view path) const override;

  const std::filesystem::path& root() const noexcept { return root_; }

 private:
  int open_beneath(std::string_view path, int flags, std::uint64_t mode = 0) const;
  int open_parent(std::string_view path, std::string& leaf) const;
  /// open_parent() that creates what is missing, through no symlink (WriteOptions::parents).
  int make_parents(std::string_view path, std::string& leaf) const;
  /// Gives the temporary file `out` the owner and mode `leaf` in `dir` has, or the workspace's
  /// owner when there is no such file (root only).
  void carry_over(int out, int dir, const std::string& leaf, std::string_view path) const;
  /// Throws CRD4008 when what `fd` names (or its entry `leaf`, when given) is blocked.
  void refuse_blocked(int fd, std::string_view path, std::string_view leaf = {}) const;
  /// Throws CRD4008 when the file `st` describes is a blocked file under another name (a hard
  /// link), or may be one that could not be looked for.
  void refuse_other_name(const struct stat& st, std::string_view path) const;

  std::filesystem::path root_;
  WorkspaceRules rules_;
  int dirfd_ = -1;
};

}  // namespace cordon
