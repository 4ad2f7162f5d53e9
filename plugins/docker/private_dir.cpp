// Walking down to the state directory through held descriptors, checking each level.
#include "private_dir.hpp"

#include <cordon/error.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <vector>

namespace cordon::docker {

namespace fs = std::filesystem;

namespace {

constexpr int kDirFlags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

[[noreturn]] void refuse(const fs::path& dir, const fs::path& level, const std::string& why) {
  throw Error(code::kIsolationFailed,
              "cordon's state directory '" + dir.string() + "' cannot be used: '" + level.string() +
                  "' " + why,
              "remove it (it was not made by cordon, or was changed since), or give another "
              "state directory; cordon never writes through a path another user controls");
}

std::string owner_text(uid_t uid) { return uid == 0 ? "root" : "uid " + std::to_string(uid); }

// A level on the way: root's or cordon's, and no one else may replace what is below it.
void check_ancestor(const fs::path& dir, const fs::path& level, const struct stat& st) {
  uid_t me = ::geteuid();
  if (st.st_uid != 0 && st.st_uid != me)
    refuse(dir, level,
           "belongs to " + owner_text(st.st_uid) + ", not to cordon (" + owner_text(me) + ")");
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0)
    refuse(dir, level, "is writable by other users");
}

// The directory itself, or a level cordon made: cordon's alone.
void check_own(const fs::path& dir, const fs::path& level, const struct stat& st) {
  uid_t me = ::geteuid();
  if (st.st_uid != me)
    refuse(dir, level,
           "belongs to " + owner_text(st.st_uid) + ", not to cordon (" + owner_text(me) + ")");
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) refuse(dir, level, "is writable by other users");
}

// `name` under `parent`, made mode 0700 when missing; `made` says whether this call made it.
int open_level(int parent, const fs::path& dir, const fs::path& level, const std::string& name,
               bool& made) {
  made = false;
  for (int attempt = 0; attempt < 2; ++attempt) {
    int fd = ::openat(parent, name.c_str(), kDirFlags);
    if (fd >= 0) return fd;
    if (errno == ELOOP || errno == ENOTDIR) {
      struct stat st {};
      bool link =
          ::fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
      refuse(dir, level, link ? "is a symlink" : "is not a directory");
    }
    if (errno != ENOENT) break;
    if (::mkdirat(parent, name.c_str(), 0700) == 0)
      made = true;
    else if (errno != EEXIST)
      break;
  }
  throw Error(code::kIsolationFailed, "cannot make cordon's state directory '" + dir.string() +
                                          "' ('" + level.string() + "'): " + std::strerror(errno));
}

}  // namespace

PrivateDir PrivateDir::open(const fs::path& path) {
  fs::path dir = path.lexically_normal();
  if (!dir.is_absolute())
    throw Error(code::kIsolationFailed,
                "cordon's state directory '" + path.string() + "' is not an absolute path");
  auto held = std::make_shared<const HeldFd>(::open("/", kDirFlags));
  fs::path level = "/";
  std::vector<std::string> parts;
  for (const auto& part : dir.relative_path())
    if (!part.empty()) parts.push_back(part.string());
  for (std::size_t i = 0; i < parts.size(); ++i) {
    level /= parts[i];
    bool made = false;
    auto next = std::make_shared<const HeldFd>(open_level(held->fd(), dir, level, parts[i], made));
    struct stat st {};
    if (::fstat(next->fd(), &st) != 0)
      refuse(dir, level, std::string("cannot be checked: ") + std::strerror(errno));
    if (made || i + 1 == parts.size())
      check_own(dir, level, st);
    else
      check_ancestor(dir, level, st);
    held = std::move(next);
  }
  return PrivateDir(dir, std::move(held));
}

PrivateDir PrivateDir::sub(const std::string& name) const {
  bool made = false;
  fs::path level = path_ / name;
  auto held = std::make_shared<const HeldFd>(open_level(fd(), level, level, name, made));
  struct stat st {};
  if (::fstat(held->fd(), &st) != 0)
    refuse(level, level, std::string("cannot be checked: ") + std::strerror(errno));
  check_own(level, level, st);
  return PrivateDir(level, std::move(held));
}

int PrivateDir::open_file(const std::string& name, int flags, int mode) const {
  return ::openat(fd(), name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, mode);
}

void PrivateDir::replace_file(const std::string& name, std::string_view bytes, int mode) const {
  std::random_device rd;
  std::string tmp = name + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(rd());
  int fd = open_file(tmp, O_WRONLY | O_CREAT | O_EXCL, mode);
  bool ok = fd >= 0 && ::fchmod(fd, static_cast<mode_t>(mode)) == 0;
  for (std::size_t done = 0; ok && done < bytes.size();) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    ok = n > 0;
    done += ok ? static_cast<std::size_t>(n) : 0;
  }
  int err = errno;
  if (fd >= 0) ::close(fd);
  if (ok && ::renameat(this->fd(), tmp.c_str(), this->fd(), name.c_str()) == 0) return;
  err = ok ? errno : err;
  ::unlinkat(this->fd(), tmp.c_str(), 0);
  throw Error(code::kIsolationFailed, "cannot write '" + (path_ / name).string() +
                                          "' in cordon's state directory: " + std::strerror(err));
}

}  // namespace cordon::docker
