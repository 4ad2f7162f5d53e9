// cordon's own directories: the walk from "/", the trust rule at each level, files by name.
#include <cordon/sdk/private_dir.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <cordon/sdk/error.hpp>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "private_dir_rule.hpp"

namespace cordon {

namespace fs = std::filesystem;
using detail::Trust;

namespace detail {

std::optional<std::string> untrusted_reason(uid_t owner, mode_t mode, uid_t euid, Trust trust) {
  if (!S_ISDIR(mode) && !S_ISREG(mode)) return "is neither a directory nor a regular file";
  auto uid = [](uid_t u) { return "uid " + std::to_string(u); };
  if (trust == Trust::own && owner != euid)
    return "is owned by " + uid(owner) + ", not by cordon's " + uid(euid);
  if (owner != 0 && owner != euid)
    return "is owned by " + uid(owner) + ", neither root nor cordon's " + uid(euid);
  // Others may add entries to a root-owned sticky directory (/tmp), never move or remove ours.
  bool sticky_root = trust == Trust::ancestor && owner == 0 && (mode & S_ISVTX) && S_ISDIR(mode);
  if ((mode & (S_IWGRP | S_IWOTH)) && !sticky_root)
    return (mode & S_IWOTH) ? "is writable by every user" : "is writable by its group";
  return std::nullopt;
}

}  // namespace detail

namespace {

[[noreturn]] void refuse_untrusted(const fs::path& path, const std::string& why) {
  throw Error(code::kUntrustedState,
              "'" + path.string() + "' " + why +
                  ": cordon keeps its own state only where no other user can change it",
              "cordon never reuses such a path: remove it, or point cordon at a directory of "
              "its own (--state-dir, XDG_STATE_HOME, XDG_RUNTIME_DIR, HOME)");
}

[[noreturn]] void failed(const char* what, const fs::path& path, int err) {
  throw Error(code::kStateIo,
              std::string("cannot ") + what + " '" + path.string() + "': " + std::strerror(err));
}

void check_name(std::string_view name, const fs::path& dir) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string_view::npos ||
      name.find('\0') != std::string_view::npos)
    throw Error(code::kStateIo,
                "'" + std::string(name) + "' is not one name in '" + dir.string() + "'");
}

struct stat stat_of(int fd, const fs::path& path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) failed("inspect", path, errno);
  return st;
}

void verify(const struct stat& st, const fs::path& path, Trust trust) {
  if (!S_ISDIR(st.st_mode)) refuse_untrusted(path, "is not a directory");
  if (auto why = detail::untrusted_reason(st.st_uid, st.st_mode, ::geteuid(), trust))
    refuse_untrusted(path, *why);
}

// `name` in `parent` as a directory, never through a symlink: O_PATH for a level passed
// through, O_RDONLY for one cordon reads or changes. An empty OwnedFd when it is missing.
OwnedFd open_level(int parent, const std::string& name, const fs::path& path, bool readable) {
  int flags = (readable ? O_RDONLY : O_PATH) | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  OwnedFd fd(::openat(parent, name.c_str(), flags));
  if (fd || errno == ENOENT) return fd;
  int err = errno;
  struct stat st {};
  if (::fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (S_ISLNK(st.st_mode)) refuse_untrusted(path, "is a symlink");
    if (!S_ISDIR(st.st_mode)) refuse_untrusted(path, "is not a directory");
  }
  failed("open", path, err);
}

// An open level verified as cordon's own; with `tighten`, left with no bits for group and
// others (it is cordon's, so nobody else can have put anything in it).
OwnedFd adopt(OwnedFd fd, const fs::path& path, bool tighten) {
  struct stat st = stat_of(fd.get(), path);
  verify(st, path, Trust::own);
  if (tighten && (st.st_mode & 077) && ::fchmod(fd.get(), st.st_mode & 07700) != 0)
    failed("restrict", path, errno);
  return fd;
}

// The child `name` of `parent` as cordon's own directory, created (mode 0700) when missing
// and `create`; an empty OwnedFd when it is missing otherwise.
OwnedFd own_level(int parent, const std::string& name, const fs::path& path, bool create) {
  OwnedFd fd = open_level(parent, name, path, true);
  if (fd) return adopt(std::move(fd), path, create);
  if (!create) return fd;
  if (::mkdirat(parent, name.c_str(), 0700) != 0 && errno != EEXIST) failed("create", path, errno);
  fd = open_level(parent, name, path, true);
  if (!fd) failed("open", path, ENOENT);
  return adopt(std::move(fd), path, true);
}

std::optional<OwnedFd> walk(const fs::path& path, bool create) {
  if (!path.is_absolute())
    throw Error(code::kStateIo,
                "cordon's state directory '" + path.string() + "' is not an absolute path");
  std::vector<std::string> names;
  for (const auto& part : path.lexically_normal().relative_path())
    if (!part.empty() && part != ".") names.push_back(part.string());
  OwnedFd fd(::open("/", (names.empty() ? O_RDONLY : O_PATH) | O_DIRECTORY | O_CLOEXEC));
  if (!fd) failed("open", "/", errno);
  verify(stat_of(fd.get(), "/"), "/", names.empty() ? Trust::own : Trust::ancestor);
  fs::path at = "/";
  for (std::size_t i = 0; i < names.size(); ++i) {
    at /= names[i];
    bool leaf = i + 1 == names.size();
    OwnedFd next = open_level(fd.get(), names[i], at, leaf);
    if (next && leaf) {
      next = adopt(std::move(next), at, create);
    } else if (next) {
      verify(stat_of(next.get(), at), at, Trust::ancestor);
    } else if (create) {
      // Made by cordon, so cordon's own, whoever made the levels above.
      next = own_level(fd.get(), names[i], at, true);
    } else {
      return std::nullopt;
    }
    fd = std::move(next);
  }
  return fd;
}

std::atomic<unsigned> temp_counter{0};

void write_all(int fd, std::string_view data, const fs::path& path) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) failed("write", path, n < 0 ? errno : ENOSPC);
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

bool remove_entry(int dir, const std::string& name, const fs::path& path, int depth) {
  if (::unlinkat(dir, name.c_str(), 0) == 0) return true;
  if (errno == ENOENT) return false;
  if (errno != EISDIR) failed("remove", path, errno);
  if (depth > 16) failed("remove", path, ELOOP);
  OwnedFd sub(::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!sub) failed("open", path, errno);
  DIR* d = ::fdopendir(sub.get());
  if (!d) failed("list", path, errno);
  sub.release();
  std::vector<std::string> names;
  while (auto* e = ::readdir(d))
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
      names.emplace_back(e->d_name);
  int sub_fd = ::dirfd(d);
  for (const auto& n : names) remove_entry(sub_fd, n, path / n, depth + 1);
  ::closedir(d);
  if (::unlinkat(dir, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT)
    failed("remove", path, errno);
  return true;
}

}  // namespace

PrivateDir::PrivateDir(OwnedFd fd, fs::path path) : fd_(std::move(fd)), path_(std::move(path)) {}

PrivateDir PrivateDir::create(const fs::path& path) {
  auto fd = walk(path, true);
  return PrivateDir(std::move(*fd), path.lexically_normal());
}

std::optional<PrivateDir> PrivateDir::open(const fs::path& path) {
  auto fd = walk(path, false);
  if (!fd) return std::nullopt;
  return PrivateDir(std::move(*fd), path.lexically_normal());
}

PrivateDir PrivateDir::subdir(std::string_view name) const {
  check_name(name, path_);
  std::string n(name);
  return PrivateDir(own_level(fd(), n, path_ / n, true), path_ / n);
}

std::optional<PrivateDir> PrivateDir::open_subdir(std::string_view name) const {
  check_name(name, path_);
  std::string n(name);
  OwnedFd fd = own_level(this->fd(), n, path_ / n, false);
  if (!fd) return std::nullopt;
  return PrivateDir(std::move(fd), path_ / n);
}

OwnedFd PrivateDir::create_file(std::string_view name, int flags, mode_t mode) const {
  check_name(name, path_);
  std::string n(name);
  OwnedFd fd(
      ::openat(fd_.get(), n.c_str(), flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
  if (!fd) failed("create", path_ / n, errno);
  return fd;
}

OwnedFd PrivateDir::open_file(std::string_view name, int flags) const {
  check_name(name, path_);
  std::string n(name);
  // O_NONBLOCK: a FIFO planted under the name must not hang cordon before it is refused.
  int f = (flags & ~(O_CREAT | O_EXCL)) | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;
  OwnedFd fd(::openat(fd_.get(), n.c_str(), f));
  if (!fd && errno == ENOENT) return fd;
  if (!fd && errno == ELOOP) refuse_untrusted(path_ / n, "is a symlink");
  if (!fd) failed("open", path_ / n, errno);
  struct stat st = stat_of(fd.get(), path_ / n);
  if (!S_ISREG(st.st_mode)) refuse_untrusted(path_ / n, "is not a regular file");
  if (auto why = detail::untrusted_reason(st.st_uid, st.st_mode, ::geteuid(), Trust::own))
    refuse_untrusted(path_ / n, *why);
  return fd;
}

void PrivateDir::write_file(std::string_view name, std::string_view data, mode_t mode) const {
  check_name(name, path_);
  std::string tmp = "." + std::string(name) + ".tmp-" + std::to_string(::getpid()) + "-" +
                    std::to_string(temp_counter++);
  ::unlinkat(fd_.get(), tmp.c_str(), 0);  // left by a killed process that had this pid
  OwnedFd out = create_file(tmp, O_WRONLY, mode);
  try {
    write_all(out.get(), data, path_ / std::string(name));
    if (::fsync(out.get()) != 0) failed("write", path_ / std::string(name), errno);
    out.reset();
    rename(tmp, name);
  } catch (...) {
    ::unlinkat(fd_.get(), tmp.c_str(), 0);
    throw;
  }
}

std::optional<std::string> PrivateDir::read_file(std::string_view name,
                                                 std::size_t max_bytes) const {
  OwnedFd fd = open_file(name, O_RDONLY);
  if (!fd) return std::nullopt;
  fs::path path = path_ / std::string(name);
  std::string text;
  char buf[16384];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) failed("read", path, errno);
    if (n == 0) return text;
    if (text.size() + static_cast<std::size_t>(n) > max_bytes)
      throw Error(code::kStateIo,
                  "'" + path.string() + "' is larger than " + std::to_string(max_bytes) + " bytes");
    text.append(buf, static_cast<std::size_t>(n));
  }
}

void PrivateDir::rename(std::string_view from, std::string_view to) const {
  check_name(from, path_);
  check_name(to, path_);
  std::string f(from), t(to);
  if (::renameat(fd_.get(), f.c_str(), fd_.get(), t.c_str()) != 0)
    failed("replace", path_ / t, errno);
}

bool PrivateDir::remove(std::string_view name) const {
  check_name(name, path_);
  std::string n(name);
  return remove_entry(fd_.get(), n, path_ / n, 0);
}

std::vector<std::string> PrivateDir::entries() const {
  // A description of its own: reading must not move the held descriptor's position.
  OwnedFd fd(::openat(fd_.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  DIR* d = fd ? ::fdopendir(fd.get()) : nullptr;
  if (!d) failed("list", path_, errno);
  fd.release();
  std::vector<std::string> names;
  while (auto* e = ::readdir(d))
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
      names.emplace_back(e->d_name);
  ::closedir(d);
  return names;
}

}  // namespace cordon
