// The sandbox's tree, made by its keeper (async-signal-safe: system calls and stack buffers).
#include "mounts.hpp"

#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "child_util.hpp"

namespace cordon::landlock {

namespace {

constexpr const char* kMaskDir = "/.cordon-masks";

bool fail(MountFailure& f, const char* step, const char* path) noexcept {
  f.step = step;
  f.path = path;
  f.err = errno;
  return false;
}

// mkdir -p of every component of `path` (not the last one when `parents_only`).
int make_dirs(const char* path, bool parents_only) noexcept {
  char buf[PATH_MAX];
  child::copy(buf, sizeof buf, path);
  std::size_t len = 0;
  while (buf[len] != '\0') ++len;
  std::size_t end = len;
  if (parents_only) {
    while (end > 0 && buf[end - 1] != '/') --end;
    if (end > 0) --end;
  }
  for (std::size_t i = 1; i <= end; ++i) {
    if (i != end && buf[i] != '/') continue;
    char saved = buf[i];
    buf[i] = '\0';
    if (::mkdir(buf, 0755) != 0 && errno != EEXIST) return -1;
    buf[i] = saved;
  }
  return 0;
}

int make_file(const char* path) noexcept {
  int fd = ::open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return errno == EEXIST ? 0 : -1;
  ::close(fd);
  return 0;
}

// An O_PATH descriptor of `path` reached through no symlink, if it is still the object that
// was resolved (dev, ino; 0 checks nothing). Else -1 with errno (ELOOP: a symlink on the way;
// ESTALE: another object now).
int open_resolved(const char* path, dev_t dev, ino_t ino) noexcept {
  open_how how{};
  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  int fd = static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how));
  if (fd < 0 || ino == 0) return fd;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino) return fd;
  ::close(fd);
  errno = ESTALE;
  return -1;
}

// Mounts the detached `tree` on exactly the object `target_fd` names.
int attach_at(int tree, int target_fd) noexcept {
  return static_cast<int>(::syscall(SYS_move_mount, tree, "", target_fd, "",
                                    MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH));
}

int attach(int tree, const char* target) noexcept {
  return static_cast<int>(
      ::syscall(SYS_move_mount, tree, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH));
}

// "mode=0755,size=N" for a tmpfs of the layout's size (no size: the kernel's default).
void tmpfs_options(char (&options)[64], const char* mode, std::uint64_t bytes) noexcept {
  child::copy(options, sizeof options, "mode=");
  child::append(options, sizeof options, mode);
  if (bytes == 0) return;
  char digits[24];
  child::append(options, sizeof options, ",size=");
  child::append(options, sizeof options, child::format_uint(digits, sizeof digits, bytes));
}

bool mount_root_tmpfs(const FlatLayout& layout, MountFailure& f) noexcept {
  char options[64];
  tmpfs_options(options, "0755", layout.tmpfs_bytes);
  // The host's /tmp serves as the mount point; everything bound from it was cloned before.
  if (::mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, options) != 0)
    return fail(f, "mount the root tmpfs", "/tmp");
  if (::chdir("/tmp") != 0) return fail(f, "enter the root tmpfs", "/tmp");
  if (::mkdir(".old", 0700) != 0) return fail(f, "mkdir", "/.old");
  if (::syscall(SYS_pivot_root, ".", ".old") != 0) return fail(f, "pivot_root", "/");
  if (::chdir("/") != 0) return fail(f, "chdir", "/");
  return true;
}

bool make_dev(const FlatLayout& layout, MountFailure& f) noexcept {
  if (::mkdir("/dev", 0755) != 0) return fail(f, "mkdir", "/dev");
  std::size_t first = layout.steps.size();
  char path[64];
  for (std::size_t i = 0; i < layout.devices.size(); ++i) {
    int tree = first + i < layout.trees.size() ? layout.trees[first + i] : -1;
    if (tree < 0) continue;
    child::copy(path, sizeof path, "/dev/");
    child::append(path, sizeof path, layout.devices[i]);
    if (make_file(path) != 0) return fail(f, "create", layout.devices[i]);
    if (attach(tree, path) != 0) return fail(f, "bind device", layout.devices[i]);
  }
  const char* links[][2] = {{"/proc/self/fd", "/dev/fd"},
                            {"/proc/self/fd/0", "/dev/stdin"},
                            {"/proc/self/fd/1", "/dev/stdout"},
                            {"/proc/self/fd/2", "/dev/stderr"}};
  for (auto& l : links)
    if (::symlink(l[0], l[1]) != 0) return fail(f, "symlink", l[1]);
  if (::mkdir("/dev/shm", 01777) != 0) return fail(f, "mkdir", "/dev/shm");
  return true;
}

bool make_home(const FlatLayout& layout, MountFailure& f) noexcept {
  if (layout.home_kind != HomeKind::root_dir) return true;
  const char* home = layout.home;
  if (make_dirs(home, true) != 0) return fail(f, "mkdir", home);
  if (::mkdir(home, 0700) != 0) return fail(f, "mkdir", home);
  return true;
}

bool run_steps(const FlatLayout& layout, MountFailure& f) noexcept {
  for (std::size_t i = 0; i < layout.steps.size(); ++i) {
    const auto& s = layout.steps[i];
    const char* target = s.target;
    if (s.create_target) {
      bool dir = s.kind == MountStep::Kind::home_tmpfs || s.dir;
      if (make_dirs(target, !dir) != 0 || (!dir && make_file(target) != 0))
        return fail(f, "create mount point", target);
    }
    if (s.kind == MountStep::Kind::home_tmpfs) {
      char options[64];
      tmpfs_options(options, "0700", layout.tmpfs_bytes);
      if (::mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, options) != 0)
        return fail(f, "mount the home tmpfs", target);
    } else if (attach(layout.trees[i], target) != 0) {
      return fail(f, "bind", target);
    }
  }
  return true;
}

// The masks: an empty mode-000 directory "d" and file "f" on a tiny tmpfs, made read-only.
// Detached (fsmount) where the kernel lets trees be cloned from a detached mount, which spares
// an unmount (and its RCU grace period); else attached at kMaskDir and unmounted afterwards.
int make_mask_source(bool detached) noexcept {
  int base = -1;
  if (detached) {
    int fs = static_cast<int>(::syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC));
    if (fs < 0) return -1;
    bool ok = ::syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "mode", "0700", 0) == 0 &&
              ::syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "size", "4k", 0) == 0 &&
              ::syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) == 0;
    base =
        ok ? static_cast<int>(::syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
                                        MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC))
           : -1;
    ::close(fs);
  } else {
    if (::mkdir(kMaskDir, 0700) != 0 ||
        ::mount("tmpfs", kMaskDir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                "mode=0700,size=4k") != 0)
      return -1;
    base = ::open(kMaskDir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  }
  if (base < 0) return -1;
  int f = ::openat(base, "f", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0);
  if (f >= 0) ::close(f);  // a file open for writing would keep the mount from going read-only
  mount_attr ro{};
  ro.attr_set = MOUNT_ATTR_RDONLY;
  if (::mkdirat(base, "d", 0) != 0 || f < 0 ||
      ::syscall(SYS_mount_setattr, base, "", AT_EMPTY_PATH, &ro, sizeof ro) != 0) {
    ::close(base);
    return -1;
  }
  return base;
}

// Each pin is bound onto itself (with what is mounted beneath it), so that it is a mount point
// the command cannot rename or remove.
bool pin_ancestors(const FlatLayout& layout, MountFailure& f) noexcept {
  for (const char* pin : layout.pins) {
    int target = open_resolved(pin, 0, 0);
    if (target < 0) return fail(f, "pin (a blocked path's directory changed)", pin);
    int tree = static_cast<int>(
        ::syscall(SYS_open_tree, target, "",
                  OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH));
    bool ok = tree >= 0 && attach_at(tree, target) == 0;
    if (tree >= 0) ::close(tree);
    ::close(target);
    if (!ok) return fail(f, "pin", pin);
  }
  return true;
}

bool mask_blocked(const FlatLayout& layout, MountFailure& f) noexcept {
  if (layout.masks.empty()) return true;
  bool detached = true;
  int base = make_mask_source(true);
  if (base >= 0) {
    int probe =
        static_cast<int>(::syscall(SYS_open_tree, base, "f", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC));
    if (probe < 0) {
      ::close(base);
      base = -1;
    }
    // `probe` stays open: closing a detached mount waits for an RCU grace period, so it (and
    // `base` below) is left to the keeper's close_range, once the command may start.
  }
  if (base < 0) {
    detached = false;
    base = make_mask_source(false);
    if (base < 0) return fail(f, "make the masks", kMaskDir);
  }
  // Each on the object the host's resolution found: a path that became a symlink, another
  // object or nothing since then refuses the run rather than leaving it unmasked.
  for (const auto& m : layout.masks) {
    int target = open_resolved(m.path, m.dev, m.ino);
    if (target < 0) return fail(f, "mask (the blocked path changed since it was resolved)", m.path);
    int tree = static_cast<int>(
        ::syscall(SYS_open_tree, base, m.dir ? "d" : "f", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC));
    bool ok = tree >= 0 && attach_at(tree, target) == 0;
    if (tree >= 0) ::close(tree);
    ::close(target);
    if (!ok) return fail(f, "mask", m.path);
  }
  if (!detached) ::close(base);
  if (!detached && (::umount2(kMaskDir, MNT_DETACH) != 0 || ::rmdir(kMaskDir) != 0))
    return fail(f, "remove", kMaskDir);
  return true;
}

bool make_symlinks(const FlatLayout& layout, MountFailure& f) noexcept {
  for (const auto& link : layout.symlinks) {
    if (make_dirs(link.path, true) != 0) return fail(f, "mkdir", link.path);
    if (::symlink(link.text, link.path) != 0 && errno != EEXIST)
      return fail(f, "symlink", link.path);
  }
  return true;
}

}  // namespace

bool make_private(MountFailure& f) noexcept {
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return fail(f, "make mounts private", "/");
  return true;
}

bool clone_sources(const FlatLayout& layout, MountFailure& f) noexcept {
  auto trees = layout.trees;
  for (std::size_t i = 0; i < trees.size(); ++i) trees[i] = -1;
  for (std::size_t i = 0; i < layout.steps.size() && i < trees.size(); ++i) {
    const auto& s = layout.steps[i];
    if (s.kind != MountStep::Kind::bind) continue;
    // The source the run was planned with, reached through no symlink: a directory swapped
    // for a link (or another one) since then refuses the run instead of being bound.
    int source = open_resolved(s.source, s.dev, s.ino);
    if (source < 0) return fail(f, "bind (the path changed since it was resolved)", s.source);
    int fd = static_cast<int>(
        ::syscall(SYS_open_tree, source, "",
                  OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH));
    ::close(source);
    if (fd < 0) return fail(f, "clone", s.source);
    trees[i] = fd;
    mount_attr attr{};
    attr.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (s.writable ? 0 : MOUNT_ATTR_RDONLY);
    if (::syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) != 0)
      return fail(f, "set mount flags", s.source);
  }
  char path[64];
  for (std::size_t i = 0; i < layout.devices.size(); ++i) {
    std::size_t slot = layout.steps.size() + i;
    if (slot >= trees.size()) break;
    child::copy(path, sizeof path, "/dev/");
    child::append(path, sizeof path, layout.devices[i]);
    int fd = static_cast<int>(
        ::syscall(SYS_open_tree, AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC));
    if (fd < 0 && errno != ENOENT && errno != ENXIO) return fail(f, "clone device", path);
    trees[slot] = fd;
  }
  return true;
}

bool enter_root(const FlatLayout& layout, MountFailure& f) noexcept {
  ::umask(0);
  return mount_root_tmpfs(layout, f);
}

bool build_root(const FlatLayout& layout, MountFailure& f) noexcept {
  ::umask(0);
  if (layout.private_tmp && ::mkdir("/tmp", 01777) != 0) return fail(f, "mkdir", "/tmp");
  if (!make_dev(layout, f)) return false;
  if (::mkdir("/proc", 0555) != 0) return fail(f, "mkdir", "/proc");
  if (::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
    return fail(f, "mount a fresh /proc", "/proc");
  if (!make_home(layout, f) || !run_steps(layout, f) || !make_symlinks(layout, f)) return false;
  ::umask(022);
  return true;
}

bool seal_root(const FlatLayout& layout, MountFailure& f) noexcept {
  if (!pin_ancestors(layout, f) || !mask_blocked(layout, f)) return false;
  if (::umount2("/.old", MNT_DETACH) != 0) return fail(f, "detach the host's root", "/.old");
  if (::rmdir("/.old") != 0) return fail(f, "rmdir", "/.old");
  for (int tree : layout.trees)
    if (tree >= 0) ::close(tree);
  ::umask(022);
  return true;
}

}  // namespace cordon::landlock
