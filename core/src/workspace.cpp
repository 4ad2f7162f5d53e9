// The workspace file API: openat2 beneath a directory descriptor; reads, listings, removals.
#include <cordon/sdk/path_guard.hpp>
#include <cordon/workspace.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "unique_fd.hpp"
#include "workspace_io.hpp"

namespace cordon {

namespace detail {

Error workspace_error(std::string_view path, const char* what, int err) {
  if (err == EXDEV || err == ELOOP)
    return Error(code::kPathEscape, "path '" + std::string(path) + "' escapes the workspace",
                 "use a path inside the workspace; symlinks may not point out of it");
  return Error(code::kWorkspaceIo,
               std::string(what) + " '" + std::string(path) + "': " + std::strerror(err));
}

std::filesystem::path fd_path(int fd) {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/fd/" + std::to_string(fd), ec);
  return ec ? std::filesystem::path{} : p;
}

std::string split_parent(std::string_view path, std::string& leaf) {
  std::string p(path);
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  auto slash = p.rfind('/');
  leaf = slash == std::string::npos ? p : p.substr(slash + 1);
  if (leaf.empty() || leaf == "." || leaf == "..")
    throw Error(code::kPathEscape, "path '" + std::string(path) + "' does not name a file",
                "name a file inside the workspace");
  return slash == std::string::npos ? "." : p.substr(0, slash);
}

}  // namespace detail

namespace {

using detail::Fd;
using detail::fd_path;

bool within(const std::filesystem::path& p, const std::filesystem::path& dir) {
  auto [d, pi] = std::mismatch(dir.begin(), dir.end(), p.begin(), p.end());
  return d == dir.end();
}

Error os_error(std::string_view path, const char* what, int err) {
  return detail::workspace_error(path, what, err);
}

}  // namespace

Workspace::Workspace(const std::filesystem::path& root, WorkspaceRules rules)
    : root_(std::filesystem::absolute(root).lexically_normal()), rules_(std::move(rules)) {
  dirfd_ = ::open(root_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dirfd_ < 0)
    throw Error(code::kPathEscape,
                "workspace '" + root_.string() + "' is not a directory: " + std::strerror(errno));
  if (auto real = fd_path(dirfd_); !real.empty()) root_ = real;
}

WorkspaceFiles::~WorkspaceFiles() = default;

Workspace::~Workspace() {
  if (dirfd_ >= 0) ::close(dirfd_);
}

int Workspace::open_beneath(std::string_view path, int flags, std::uint64_t mode) const {
  std::string p(path.empty() ? "." : path);
  open_how how{};
  how.flags = static_cast<std::uint64_t>(flags | O_CLOEXEC);
  how.mode = mode;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  long fd;
  do {
    fd = ::syscall(SYS_openat2, dirfd_, p.c_str(), &how, sizeof how);
  } while (fd < 0 && errno == EAGAIN);
  if (fd < 0) throw os_error(path, "cannot open", errno);
  return static_cast<int>(fd);
}

// Opens the directory holding `path` beneath the workspace.
int Workspace::open_parent(std::string_view path, std::string& leaf) const {
  std::string parent = detail::split_parent(path, leaf);
  if (parent.empty()) parent = "/";  // "/x": openat2 refuses the absolute path (CRD4004)
  return open_beneath(parent, O_PATH | O_DIRECTORY);
}

void Workspace::refuse_blocked(int fd, std::string_view path, std::string_view leaf) const {
  if (rules_.blocked.empty() && rules_.own_state.empty()) return;
  auto real = fd_path(fd);
  // A write or removal names the file through its directory: the file itself may be blocked.
  if (!real.empty() && !leaf.empty()) real = (std::filesystem::path(real) / leaf).string();
  if (real.empty()) return;
  for (const auto& b : rules_.blocked)
    if (within(real, b))
      throw Error(code::kBlockedPath, "path '" + std::string(path) + "' is blocked by the policy",
                  "filesystem.blocked lists '" + b.string() + "'");
  for (const auto& b : rules_.own_state)
    if (within(real, b))
      throw Error(code::kBlockedPath,
                  "path '" + std::string(path) + "' is blocked: it is cordon's own state ('" +
                      b.string() + "')",
                  "no command and no file call may read or change cordon's own state");
}

// A hard link in the workspace is the blocked file itself under another name: a run refuses
// it (CRD1007), and the file API does not read it either.
void Workspace::refuse_other_name(const struct stat& st, std::string_view path) const {
  if (rules_.blocked.empty() || st.st_nlink < 2) return;
  std::vector<std::string> blocked;
  for (const auto& b : rules_.blocked) blocked.push_back(b.string());
  BlockedName found = blocked_name_of(st, blocked);
  if (!found.path.empty())
    throw Error(code::kBlockedPath,
                "path '" + std::string(path) + "' is another name (a hard link) of a blocked file",
                "filesystem.blocked lists '" + found.path + "'");
  if (!found.looked_all)
    throw Error(code::kBlockedPath,
                "path '" + std::string(path) +
                    "' has other names (hard links), and a blocked directory holds too many "
                    "files to tell whether it is one of them",
                "read a copy of the file, or block fewer files");
}

std::string Workspace::read(std::string_view path) const {
  Fd fd(open_beneath(path, O_RDONLY | O_NOCTTY | O_NONBLOCK));
  refuse_blocked(fd.fd, path);
  struct stat st {};
  if (::fstat(fd.fd, &st) != 0) throw os_error(path, "cannot stat", errno);
  if (!S_ISREG(st.st_mode))
    throw Error(code::kWorkspaceIo, "'" + std::string(path) + "' is not a regular file");
  refuse_other_name(st, path);
  if (static_cast<std::uint64_t>(st.st_size) > rules_.max_read_bytes)
    throw Error(code::kWorkspaceIo, "'" + std::string(path) + "' is " + std::to_string(st.st_size) +
                                        " bytes, over the cap of " +
                                        std::to_string(rules_.max_read_bytes));
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw os_error(path, "cannot read", errno);
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
    if (out.size() > rules_.max_read_bytes)
      throw Error(code::kWorkspaceIo, "'" + std::string(path) + "' grew over the read cap");
  }
  return out;
}

std::vector<WorkspaceEntry> Workspace::list(std::string_view path) const {
  Fd fd(open_beneath(path, O_RDONLY | O_DIRECTORY));
  refuse_blocked(fd.fd, path);
  DIR* d = ::fdopendir(::dup(fd.fd));
  if (!d) throw os_error(path, "cannot list", errno);
  std::vector<WorkspaceEntry> out;
  while (auto* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    struct stat st {};
    WorkspaceEntry entry{name};
    if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
      entry.size = static_cast<std::uint64_t>(st.st_size);
      entry.kind = S_ISREG(st.st_mode)   ? WorkspaceEntry::Kind::file
                   : S_ISDIR(st.st_mode) ? WorkspaceEntry::Kind::directory
                   : S_ISLNK(st.st_mode) ? WorkspaceEntry::Kind::symlink
                                         : WorkspaceEntry::Kind::other;
    }
    out.push_back(std::move(entry));
  }
  ::closedir(d);
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.name < b.name; });
  return out;
}

void Workspace::remove(std::string_view path) const {
  std::string leaf;
  Fd dir(open_parent(path, leaf));
  refuse_blocked(dir.fd, path, leaf);
  struct stat st {};
  if (::fstatat(dir.fd, leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    throw os_error(path, "cannot remove", errno);
  int flags = S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0;
  if (::unlinkat(dir.fd, leaf.c_str(), flags) != 0) throw os_error(path, "cannot remove", errno);
}

}  // namespace cordon
