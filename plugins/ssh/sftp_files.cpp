// The remote workspace over SFTP: every path checked component by component before it is used.
#include "sftp_files.hpp"

#include <fcntl.h>
#include <libssh/libssh.h>
#include <libssh/sftp.h>
#include <cordon/sdk/error.hpp>

#include <algorithm>
#include <cstdio>
#include <random>

#include "remote_line.hpp"

namespace cordon::ssh {

namespace {

// What lstat says of a path, copied out of libssh's attributes.
struct Stat {
  WorkspaceEntry::Kind kind = WorkspaceEntry::Kind::other;
  std::uint64_t size = 0;
  std::uint32_t mode = 0;
};

WorkspaceEntry::Kind kind_of_type(std::uint8_t type) {
  switch (type) {
    case SSH_FILEXFER_TYPE_REGULAR:
      return WorkspaceEntry::Kind::file;
    case SSH_FILEXFER_TYPE_DIRECTORY:
      return WorkspaceEntry::Kind::directory;
    case SSH_FILEXFER_TYPE_SYMLINK:
      return WorkspaceEntry::Kind::symlink;
    default:
      return WorkspaceEntry::Kind::other;
  }
}

std::optional<Stat> lstat_of(sftp_session sftp, const std::string& full) {
  sftp_attributes a = sftp_lstat(sftp, full.c_str());
  if (!a) return std::nullopt;
  Stat s{kind_of_type(a->type), a->size, a->permissions};
  sftp_attributes_free(a);
  return s;
}

Error escape(std::string_view path, const std::string& why) {
  return Error(code::kPathEscape, "'" + std::string(path) + "' " + why,
               "file API paths are relative to the workspace and stay beneath it");
}

// The components of `path`: an absolute path, a `..` or a NUL is refused.
std::vector<std::string> components(std::string_view path) {
  if (path.find('\0') != std::string_view::npos)
    throw Error(code::kControlChar, "a file API path contains a NUL byte");
  if (!path.empty() && path.front() == '/') throw escape(path, "is absolute");
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at <= path.size()) {
    auto slash = path.find('/', at);
    auto part =
        path.substr(at, slash == std::string_view::npos ? std::string_view::npos : slash - at);
    if (part == "..") throw escape(path, "leads out of the workspace ('..')");
    if (!part.empty() && part != ".") out.emplace_back(part);
    if (slash == std::string_view::npos) break;
    at = slash + 1;
  }
  return out;
}

bool beneath(const std::string& path, const std::string& root) {
  return root == "/" || path == root || path.rfind(root + "/", 0) == 0;
}

std::string random_suffix() {
  std::random_device rd;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%08x%08x", rd(), rd());
  return buf;
}

}  // namespace

SftpFiles::SftpFiles(std::unique_ptr<Connection> connection, const std::string& root,
                     WorkspaceRules rules)
    : connection_(std::move(connection)), rules_(std::move(rules)) {
  sftp_ = sftp_new(connection_->session());
  try {
    open_root(root);
  } catch (...) {
    if (sftp_) sftp_free(sftp_);  // no destructor runs for a constructor that throws
    sftp_ = nullptr;
    throw;
  }
}

void SftpFiles::open_root(const std::string& root) {
  if (!sftp_ || sftp_init(sftp_) != SSH_OK)
    throw Error(
        code::kWorkspaceIo,
        connection_->target().name() + " offers no SFTP: " + ssh_get_error(connection_->session()),
        "the workspace file API needs the host's sftp subsystem (sshd_config Subsystem)");
  auto s = lstat_of(sftp_, root);
  if (!s || s->kind != WorkspaceEntry::Kind::directory)
    throw Error(code::kPathEscape,
                "the remote workspace '" + root + "' on " + connection_->target().name() +
                    (s ? (s->kind == WorkspaceEntry::Kind::symlink ? " is a symlink"
                                                                   : " is not a directory")
                       : " does not exist"),
                "give an existing directory: --workspace or backends.ssh.workspace");
  char* canonical = sftp_canonicalize_path(sftp_, root.c_str());
  if (!canonical) fail("cannot be resolved", root);
  root_ = canonical;
  ssh_string_free_char(canonical);
}

SftpFiles::~SftpFiles() {
  if (sftp_) sftp_free(sftp_);
}

void SftpFiles::fail(const std::string& what, std::string_view path) const {
  throw Error(code::kWorkspaceIo, "'" + std::string(path) + "' in the workspace on " +
                                      connection_->target().name() + ": " + what);
}

std::optional<WorkspaceEntry::Kind> SftpFiles::kind_of(const std::string& full) const {
  auto s = lstat_of(sftp_, full);
  if (!s) return std::nullopt;
  return s->kind;
}

void SftpFiles::refuse_blocked(const std::string& full, std::string_view path) const {
  for (const auto& b : rules_.blocked)
    if (beneath(full, b.lexically_normal().string()))
      throw Error(code::kBlockedPath,
                  "'" + std::string(path) + "' is blocked by the policy (" + b.string() + ")",
                  "the policy's filesystem.blocked keeps it out of the file API too");
}

std::pair<std::string, std::string> SftpFiles::locate(std::string_view path, bool create) const {
  auto parts = components(path);
  if (parts.empty()) throw escape(path, "names the workspace itself, not a file in it");
  std::string dir = root_;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    dir += "/" + parts[i];
    auto k = kind_of(dir);
    if (!k && create) {
      if (sftp_mkdir(sftp_, dir.c_str(), 0755) != SSH_OK) fail("cannot create a directory", path);
    } else if (!k) {
      fail("no such directory on the way", path);
    } else if (*k == WorkspaceEntry::Kind::symlink) {
      throw escape(path, "passes through a symlink ('" + parts[i] + "'): not followed");
    } else if (*k != WorkspaceEntry::Kind::directory) {
      fail("'" + parts[i] + "' on the way is not a directory", path);
    }
  }
  // The server's view of where it lands, for what the walk cannot see (a bind mount, a race).
  char* canonical = sftp_canonicalize_path(sftp_, dir.c_str());
  if (!canonical) fail("its directory cannot be resolved", path);
  std::string real = canonical;
  ssh_string_free_char(canonical);
  if (!beneath(real, root_)) throw escape(path, "resolves outside the workspace");
  std::string full = dir + "/" + parts.back();
  refuse_blocked(full, path);
  return {dir, full};
}

std::string SftpFiles::read(std::string_view path) const {
  auto [dir, full] = locate(path, false);
  auto s = lstat_of(sftp_, full);
  if (!s) fail("no such file", path);
  if (s->kind == WorkspaceEntry::Kind::symlink) throw escape(path, "is a symlink: not followed");
  if (s->kind != WorkspaceEntry::Kind::file) fail("not a regular file", path);
  if (s->size > rules_.max_read_bytes)
    fail("larger than the read cap (" + std::to_string(rules_.max_read_bytes) + " bytes)", path);
  sftp_file f = sftp_open(sftp_, full.c_str(), O_RDONLY, 0);
  if (!f) fail("cannot be opened", path);
  std::string data;
  char buf[32768];
  for (;;) {
    ssize_t n = sftp_read(f, buf, sizeof buf);
    if (n < 0) {
      sftp_close(f);
      fail("cannot be read", path);
    }
    if (n == 0) break;
    data.append(buf, static_cast<std::size_t>(n));
    if (data.size() > rules_.max_read_bytes) {
      sftp_close(f);
      fail("grew past the read cap while read", path);
    }
  }
  sftp_close(f);
  return data;
}

void SftpFiles::write(std::string_view path, std::string_view data, WriteOptions options) const {
  if (data.size() > rules_.max_write_bytes)
    fail("larger than the write cap (" + std::to_string(rules_.max_write_bytes) + " bytes)", path);
  auto [dir, full] = locate(path, options.parents);
  auto old = lstat_of(sftp_, full);
  if (old && old->kind == WorkspaceEntry::Kind::symlink)
    throw escape(path, "is a symlink: not followed");
  if (old && old->kind != WorkspaceEntry::Kind::file) fail("not a regular file", path);
  // New contents never run as someone else: set-user-ID and set-group-ID are dropped.
  mode_t mode = old ? (old->mode & 01777) : 0644;
  std::string temp = dir + "/.cordon-write-" + random_suffix();
  sftp_file f = sftp_open(sftp_, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (!f) fail("cannot create a temporary file beside it", path);
  bool written = true;
  for (std::size_t at = 0; at < data.size() && written;) {
    ssize_t n = sftp_write(f, data.data() + at, std::min<std::size_t>(data.size() - at, 32768));
    written = n > 0;
    at += written ? static_cast<std::size_t>(n) : 0;
  }
  written = sftp_close(f) == SSH_OK && written;
  if (!written || sftp_chmod(sftp_, temp.c_str(), mode) != SSH_OK) {
    sftp_unlink(sftp_, temp.c_str());
    fail("cannot be written", path);
  }
  // rename(2) on the host: it replaces the file whole and never follows the last name.
  auto moved = connection_->capture("mv -fT -- " + sh_quote(temp) + " " + sh_quote(full), 30);
  if (moved.status != 0) {
    sftp_unlink(sftp_, temp.c_str());
    fail("cannot be replaced: " + moved.err.substr(0, 300), path);
  }
}

std::vector<WorkspaceEntry> SftpFiles::list(std::string_view path) const {
  std::string dir = root_;
  if (!components(path).empty()) {
    auto [parent, full] = locate(path, false);
    auto k = kind_of(full);
    if (k && *k == WorkspaceEntry::Kind::symlink) throw escape(path, "is a symlink: not followed");
    if (!k || *k != WorkspaceEntry::Kind::directory) fail("not a directory", path);
    dir = full;
  }
  sftp_dir d = sftp_opendir(sftp_, dir.c_str());
  if (!d) fail("cannot be listed", path);
  std::vector<WorkspaceEntry> out;
  while (sftp_attributes a = sftp_readdir(sftp_, d)) {
    std::string name = a->name ? a->name : "";
    if (name != "." && name != "..") out.push_back({name, kind_of_type(a->type), a->size});
    sftp_attributes_free(a);
  }
  sftp_closedir(d);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

void SftpFiles::remove(std::string_view path) const {
  auto [dir, full] = locate(path, false);
  auto k = kind_of(full);
  if (!k) fail("no such file", path);
  int rc = *k == WorkspaceEntry::Kind::directory ? sftp_rmdir(sftp_, full.c_str())
                                                 : sftp_unlink(sftp_, full.c_str());
  if (rc != SSH_OK) fail("cannot be removed", path);
}

}  // namespace cordon::ssh
