// The workspace file API on the remote host, over SFTP (cordon/sdk/workspace_files.hpp).
//
// SFTP has no openat2: nothing on the server keeps a path beneath the root. So each path is
// checked here, then used: `..` and absolute paths are refused before anything is sent; every
// directory on the way, and the file itself, is looked at with lstat and a symlink anywhere is
// refused (CRD4004), never followed; the directory the operation lands in is canonicalized by
// the server and must lie beneath the canonical root. A write goes to a temporary file in the
// same directory, then replaces the file with one rename (`mv -fT` on an exec channel: SFTP v3's
// own rename will not replace a file), keeping the replaced file's permission bits less
// set-user-ID and set-group-ID.
//
// What it cannot do: a command running in that workspace at the same moment can swap a checked
// directory for a symlink between the check and the use. Run file operations when no command runs
// there, or keep such commands under the remote-cordon path's write confinement.
#pragma once

#include <cordon/sdk/workspace_files.hpp>

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "connection.hpp"

struct sftp_session_struct;

namespace cordon::ssh {

class SftpFiles final : public WorkspaceFiles {
 public:
  /// Opens SFTP on `connection` and the workspace `root` (absolute; must be a directory that is
  /// not a symlink). Throws cordon::Error CRD4004 (root), CRD4009 (no SFTP), CRD1005.
  SftpFiles(std::unique_ptr<Connection> connection, const std::string& root, WorkspaceRules rules);
  ~SftpFiles() override;

  std::string read(std::string_view path) const override;
  void write(std::string_view path, std::string_view data,
             WriteOptions options = {}) const override;
  std::vector<WorkspaceEntry> list(std::string_view path) const override;
  void remove(std::string_view path) const override;

 private:
  /// Starts SFTP and checks the root (the constructor's work, undone by it when this throws).
  void open_root(const std::string& root);
  /// `path`'s directory checked (created when `create`), and the file's full path in it.
  std::pair<std::string, std::string> locate(std::string_view path, bool create) const;
  /// The kind of what `full` names without following it; nullopt when nothing is there.
  std::optional<WorkspaceEntry::Kind> kind_of(const std::string& full) const;
  void refuse_blocked(const std::string& full, std::string_view path) const;
  [[noreturn]] void fail(const std::string& what, std::string_view path) const;

  std::unique_ptr<Connection> connection_;
  sftp_session_struct* sftp_ = nullptr;
  std::string root_;  ///< canonical
  WorkspaceRules rules_;
};

}  // namespace cordon::ssh
