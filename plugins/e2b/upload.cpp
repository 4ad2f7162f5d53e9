// The workspace walk behind an upload.
#include "upload.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cordon/sdk/error.hpp>

#include <algorithm>
#include <set>
#include <utility>

#include <cordon/sdk/tar.hpp>
#include "paths.hpp"

namespace cordon::e2b {

using sdk::TarWriter;

namespace {

using Identity = std::pair<dev_t, ino_t>;

constexpr std::size_t kBlockedWalk = 4096;

struct Fd {
  int fd;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};

std::vector<std::string> names_in(int dir_fd) {
  std::vector<std::string> out;
  int dup = ::dup(dir_fd);
  if (dup < 0) return out;
  DIR* d = ::fdopendir(dup);
  if (!d) {
    ::close(dup);
    return out;
  }
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(std::move(n));
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

// The identities of the blocked files that have more than one name; `complete` false when a
// blocked tree was larger than the walk looks at.
void blocked_identities(int dir_fd, std::set<Identity>& out, std::size_t& seen, bool& complete) {
  for (const auto& name : names_in(dir_fd)) {
    if (++seen > kBlockedWalk) {
      complete = false;
      return;
    }
    struct stat st {};
    if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISREG(st.st_mode) && st.st_nlink > 1) out.insert({st.st_dev, st.st_ino});
    if (S_ISDIR(st.st_mode)) {
      Fd sub(::openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (sub.fd >= 0) blocked_identities(sub.fd, out, seen, complete);
    }
  }
}

// The read and search bits the workspace's owner has on it here (as "other" bits, 0-5).
unsigned owner_rx(const struct stat& st, uid_t uid, gid_t gid) {
  if (uid == 0 || st.st_uid == uid) return (st.st_mode >> 6) & 5;
  if (st.st_gid == gid) return (st.st_mode >> 3) & 5;
  return st.st_mode & 5;
}

bool readable_by(const struct stat& st, uid_t uid, gid_t gid) { return owner_rx(st, uid, gid) & 4; }

// In the sandbox everything copied is root's, and the command's user is "other" to it: it gets
// what the workspace's owner had here, reading and searching (and executing), never writing.
// The owner bits are the same plus writing, for the write paths handed to the user after the
// copy: a file that was not executable here is not there either.
unsigned vm_mode(const struct stat& st, uid_t uid, gid_t gid) {
  unsigned rx = owner_rx(st, uid, gid);
  return (rx << 6) | 0200 | (rx << 3) | rx;
}

struct Walk {
  const UploadSpec& spec;
  std::set<Identity> blocked_links;
  bool blocked_complete = true;
  TarWriter tar;
  Upload result;

  std::string remote(const std::string& rel) const {
    std::string base = spec.remote_root.substr(1);  // tar entries are relative to /
    return rel.empty() ? base : (base.empty() ? rel : base + "/" + rel);
  }

  bool excluded(const std::string& local) const {
    for (const auto& x : spec.excluded)
      if (within(local, x)) return true;
    return false;
  }

  std::string read_file(int dir_fd, const std::string& name, const std::string& local) {
    Fd f(::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (f.fd < 0)
      throw Error(code::kWorkspaceIo, "cannot read " + local + " to copy it into the sandbox");
    std::string content;
    char buf[65536];
    for (;;) {
      ssize_t n = ::read(f.fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0)
        throw Error(code::kWorkspaceIo, "cannot read " + local + " to copy it into the sandbox");
      if (n == 0) break;
      content.append(buf, static_cast<std::size_t>(n));
      if (result.bytes + content.size() > spec.limit_bytes) too_large();
    }
    return content;
  }

  [[noreturn]] void too_large() const {
    throw Error(code::kWorkspaceIo,
                "the workspace holds more than " + std::to_string(spec.limit_bytes >> 20) +
                    " MiB to copy into the sandbox",
                "raise backends.e2b.upload_limit_mb, run in a smaller workspace, or set "
                "backends.e2b.upload = false");
  }

  void regular(int dir_fd, const std::string& name, const struct stat& st, const std::string& local,
               const std::string& rel) {
    if (st.st_nlink > 1) {
      if (blocked_links.count({st.st_dev, st.st_ino})) {
        result.skipped.push_back("a hard link to a blocked file: " + local);
        return;
      }
      if (!blocked_complete)
        throw Error(code::kUnmaskableName,
                    local +
                        " has other names, and a blocked directory is too large to rule "
                        "out that one of them is blocked",
                    "remove the hard link, or block a smaller directory");
    }
    if (!readable_by(st, spec.owner_uid, spec.owner_gid)) {
      result.skipped.push_back("unreadable by the workspace's owner: " + local);
      return;
    }
    std::string content = read_file(dir_fd, name, local);
    result.bytes += content.size();
    ++result.files;
    tar.file(remote(rel), vm_mode(st, spec.owner_uid, spec.owner_gid), content, st.st_mtime);
  }

  void directory(int dir_fd, const std::string& local, const std::string& rel) {
    for (const auto& name : names_in(dir_fd)) {
      std::string child_local = local + "/" + name;
      std::string child_rel = rel.empty() ? name : rel + "/" + name;
      if (excluded(child_local)) continue;
      struct stat st {};
      if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      if (S_ISDIR(st.st_mode)) {
        Fd sub(::openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (sub.fd < 0 || !readable_by(st, spec.owner_uid, spec.owner_gid)) {
          result.skipped.push_back("unreadable by the workspace's owner: " + child_local);
          continue;
        }
        tar.directory(remote(child_rel), vm_mode(st, spec.owner_uid, spec.owner_gid));
        directory(sub.fd, child_local, child_rel);
      } else if (S_ISREG(st.st_mode)) {
        regular(dir_fd, name, st, child_local, child_rel);
      } else if (S_ISLNK(st.st_mode)) {
        char target[4096];
        ssize_t n = ::readlinkat(dir_fd, name.c_str(), target, sizeof target);
        if (n > 0) tar.symlink(remote(child_rel), std::string_view(target, n));
      } else {
        result.skipped.push_back("a special file: " + child_local);
      }
    }
  }
};

}  // namespace

Upload make_upload(const UploadSpec& spec) {
  Walk w{spec, {}, true, {}, {}};
  std::size_t seen = 0;
  for (const auto& b : spec.blocked) {
    struct stat st {};
    if (::lstat(b.c_str(), &st) != 0) continue;
    if (S_ISREG(st.st_mode) && st.st_nlink > 1) w.blocked_links.insert({st.st_dev, st.st_ino});
    if (!S_ISDIR(st.st_mode)) continue;
    Fd d(::open(b.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (d.fd >= 0) blocked_identities(d.fd, w.blocked_links, seen, w.blocked_complete);
  }
  Fd root(::open(spec.local_root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (root.fd < 0)
    throw Error(code::kWorkspaceIo, "cannot open the workspace " + spec.local_root + " to copy it");
  // The root itself is not an entry: extracting it would reset the mode of a directory the
  // sandbox already has (a workspace at /tmp).
  w.directory(root.fd, spec.local_root, "");
  w.result.archive = w.tar.finish();
  return std::move(w.result);
}

}  // namespace cordon::e2b
