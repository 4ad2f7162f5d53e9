// Workspace::write: a temporary file renamed over the target, with the target's mode and owner,
// and the parent directories created through no symlink when asked.
#include <cordon/workspace.hpp>

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <random>
#include <utility>
#include <vector>

#include "unique_fd.hpp"
#include "workspace_io.hpp"

namespace cordon {

namespace {

using detail::Fd;
using detail::workspace_error;

// Temporary names are random so that nothing can pre-create them.
std::string temp_name(const std::string& leaf) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(rng()));
  return "." + leaf.substr(0, 64) + ".cordon-" + buf + ".tmp";
}

void write_data(int fd, std::string_view data, std::string_view path) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw workspace_error(path, "cannot write", errno);
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

// The names between the workspace and the file; "." parts dropped. ".." and absolute paths are
// refused here, as openat2 RESOLVE_BENEATH would refuse them.
std::vector<std::string> parent_names(const std::string& parent, std::string_view path) {
  if (parent.empty() || parent.front() == '/') throw workspace_error(path, "cannot open", EXDEV);
  std::vector<std::string> names;
  std::size_t at = 0;
  while (at <= parent.size()) {
    auto slash = parent.find('/', at);
    if (slash == std::string::npos) slash = parent.size();
    std::string name = parent.substr(at, slash - at);
    if (name == "..") throw workspace_error(path, "cannot open", EXDEV);
    if (!name.empty() && name != ".") names.push_back(std::move(name));
    at = slash + 1;
  }
  return names;
}

// One directory entry of `dir`, not a symlink and not through one; -1 with errno otherwise.
int open_dir_entry(int dir, const std::string& name) {
  open_how how{};
  how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  long fd;
  do {
    fd = ::syscall(SYS_openat2, dir, name.c_str(), &how, sizeof how);
  } while (fd < 0 && errno == EAGAIN);
  return static_cast<int>(fd);
}

Error through_symlink(std::string_view path, const std::string& name) {
  return Error(code::kPathEscape,
               "path '" + std::string(path) + "' passes through '" + name +
                   "', which is a symlink: creating parent directories follows none",
               "name the real directory, or create the directories without a symlink on the way");
}

}  // namespace

int Workspace::make_parents(std::string_view path, std::string& leaf) const {
  auto names = parent_names(detail::split_parent(path, leaf), path);
  struct stat root {};
  if (::fstat(dirfd_, &root) != 0) throw workspace_error(path, "cannot stat", errno);
  Fd dir(::fcntl(dirfd_, F_DUPFD_CLOEXEC, 0));
  if (dir.fd < 0) throw workspace_error(path, "cannot open", errno);
  for (const auto& name : names) {
    int fd = open_dir_entry(dir.fd, name);
    if (fd < 0 && errno == ENOENT) {
      refuse_blocked(dir.fd, path, name);
      if (::mkdirat(dir.fd, name.c_str(), 0755) != 0 && errno != EEXIST)
        throw workspace_error(path, "cannot create a directory for", errno);
      fd = open_dir_entry(dir.fd, name);
      struct stat st {};
      // Only a directory cordon made itself (a racing command's own stays as it is).
      if (fd >= 0 && ::geteuid() == 0 && ::fstat(fd, &st) == 0 && st.st_uid == 0 &&
          ::fchownat(fd, "", root.st_uid, root.st_gid, AT_EMPTY_PATH) != 0) {
        ::close(fd);
        throw workspace_error(path, "cannot set the owner of a directory for", errno);
      }
    }
    if (fd < 0 && errno == ELOOP) throw through_symlink(path, name);
    if (fd < 0) throw workspace_error(path, "cannot open", errno);
    ::close(std::exchange(dir.fd, fd));
  }
  return std::exchange(dir.fd, -1);
}

void Workspace::carry_over(int out, int dir, const std::string& leaf, std::string_view path) const {
  struct stat old {};
  bool replacing =
      ::fstatat(dir, leaf.c_str(), &old, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(old.st_mode);
  if (::geteuid() == 0) {
    struct stat owner = old;
    if (!replacing && ::fstat(dirfd_, &owner) != 0)
      throw workspace_error(path, "cannot stat the workspace for", errno);
    if (::fchown(out, owner.st_uid, owner.st_gid) != 0)
      throw workspace_error(path, "cannot set the owner of", errno);
  }
  // After fchown, which clears set-user-ID: the bits are set on what cordon opened, by fd.
  if (replacing && ::fchmod(out, old.st_mode & 0777) != 0)
    throw workspace_error(path, "cannot set the mode of", errno);
}

void Workspace::write(std::string_view path, std::string_view data, WriteOptions options) const {
  if (data.size() > rules_.max_write_bytes)
    throw Error(code::kWorkspaceIo, "writing " + std::to_string(data.size()) + " bytes to '" +
                                        std::string(path) + "' is over the cap of " +
                                        std::to_string(rules_.max_write_bytes));
  std::string leaf;
  Fd dir(options.parents ? make_parents(path, leaf) : open_parent(path, leaf));
  refuse_blocked(dir.fd, path, leaf);
  std::string tmp = temp_name(leaf);
  Fd out(::openat(dir.fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (out.fd < 0) throw workspace_error(path, "cannot create a temporary file for", errno);
  try {
    // Before the data: it is never readable by more than the final file lets.
    carry_over(out.fd, dir.fd, leaf, path);
    write_data(out.fd, data, path);
    if (::fsync(out.fd) != 0) throw workspace_error(path, "cannot sync", errno);
    // renameat replaces `leaf` itself, never what a symlink of that name points to.
    if (::renameat(dir.fd, tmp.c_str(), dir.fd, leaf.c_str()) != 0)
      throw workspace_error(path, "cannot replace", errno);
  } catch (...) {
    ::unlinkat(dir.fd, tmp.c_str(), 0);
    throw;
  }
}

}  // namespace cordon
