/* The entry process (pid 1) of every cordon container, one-shot or pooled. It waits on stdin
 * for a 16-byte nonce, the mount checks and the argv of the one command this container will run,
 * then runs it as its child, so that the rest of stdin is the command's. When the command ends,
 * it kills and reaps every other process of the container, then writes the nonce and the status
 * (4 bytes, big-endian; 128+n for a signal) as the last bytes of stderr and of stdout: once
 * cordon has both, it has all the output and the exit, and nothing of the command is alive. The
 * nonce never reaches the command: it is read before the exec, and the waiter is not dumpable, so
 * /proc/1/mem is closed to it.
 *
 * Before the command, it checks who it is and every bind mount cordon asked for. Its uid, gid
 * and supplementary groups must not be 0: a `user` setting that the image resolves to root
 * runs nothing. Each mount's target here, opened without following any symlink, must be the
 * root of a mount and give the device and inode cordon recorded from the source it holds open
 * on the host (a bind mount keeps them), so that a source path swapped on the host after that
 * (a symlink renamed into it) is caught before anything runs. On a failed check nothing is run:
 * the trailer's status is one of the k* statuses below (above any exit status) with the index
 * of the failed check, and cordon refuses the run.
 *
 * It enforces the run's deadline itself: at the deadline it kills every process of the
 * container and ends with kDeadline, so that a run ends on time even when cordon is gone.
 *
 * Run as `/.cordon-waiter --multicall NAME... -- DIR...` it runs no command: it lists the
 * multi-call programs (busybox, toybox) among the executables of each DIR that provide one of
 * the NAMEs as an applet, by asking each (`busybox --list`), and prints the real path of each
 * file of such a program, one per line, for cordon to mask (multicall.hpp), each followed by
 * "=NAME" when it was found by another name (a link).
 *
 * Wire format of the input (integers big-endian): nonce; flags (4 bytes: bit 0, the rest of
 * stdin is the command's, else its stdin is /dev/null); the milliseconds left until the
 * deadline (8 bytes, 0: none); when flags bit 1 is set, the uid the waiter must have (4 bytes:
 * the one the image's /etc/passwd gives a user the `user` setting names; on another, kOtherUid);
 * the count of checks (4 bytes), each a 4-byte length and the target's bytes, then the device
 * and the inode (8 bytes each); the count of arguments (4 bytes), each a 4-byte length and its
 * bytes. Built static, bind-mounted read-only into the container. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

enum { kNonce = 16, kMaxArgs = 65536, kMaxArg = 1 << 20, kMaxChecks = 4096, kMaxTarget = 4096 };
enum { kStdinFollows = 1, kExpectUid = 2 };
/* Trailer statuses above any exit status (waiter_blob.hpp): a failed check + the check's index,
 * and for a failed stat its errno (bits 16-23); a root identity + which ids were 0; the kill at
 * the deadline. */
#define kMountMismatch 0x01000000u
#define kMountUnreadable 0x02000000u
#define kRootIdentity 0x03000000u
#define kMountThroughLink 0x04000000u
#define kDeadline 0x05000000u
#define kOtherUid 0x06000000u
enum { kRootUid = 1, kRootGid = 2, kRootGroup = 4 };

static volatile pid_t child = 0;
static volatile sig_atomic_t expired = 0;

/* Reads exactly n bytes (never more: what follows belongs to the command). */
static int read_exact(void* buf, size_t n) {
  char* p = buf;
  while (n > 0) {
    ssize_t got = read(0, p, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return -1;
    p += got;
    n -= (size_t)got;
  }
  return 0;
}

static int read_u32(uint32_t* out) {
  unsigned char b[4];
  if (read_exact(b, 4) != 0) return -1;
  *out = ((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) | ((uint32_t)b[2] << 8) | b[3];
  return 0;
}

static int read_u64(uint64_t* out) {
  uint32_t hi = 0, lo = 0;
  if (read_u32(&hi) != 0 || read_u32(&lo) != 0) return -1;
  *out = ((uint64_t)hi << 32) | lo;
  return 0;
}

/* `path` escaped as /proc/self/mountinfo writes mount points. */
static void mountinfo_escape(const char* path, char* out, size_t size) {
  size_t n = 0;
  for (const char* c = path; *c && n + 5 < size; ++c) {
    if (*c == ' ' || *c == '\t' || *c == '\n' || *c == '\\')
      n += (size_t)snprintf(out + n, size - n, "\\%03o", (unsigned char)*c);
    else
      out[n++] = *c;
  }
  out[n] = '\0';
}

/* Without statx's mount-root attribute (before Linux 5.8): is the real path of `target` a
 * mount point in /proc/self/mountinfo (its fifth field)? */
static int listed_mount_point(const char* target) {
  char real[PATH_MAX], want[4 * PATH_MAX + 1], line[16384];
  if (!realpath(target, real)) return 0;
  mountinfo_escape(real, want, sizeof want);
  FILE* f = fopen("/proc/self/mountinfo", "re");
  if (!f) return 0;
  int found = 0;
  while (!found && fgets(line, sizeof line, f)) {
    char* field = line;
    for (int i = 0; i < 4 && field; ++i) field = strchr(field, ' ') ? strchr(field, ' ') + 1 : NULL;
    if (!field) continue;
    size_t len = strcspn(field, " ");
    found = len == strlen(want) && strncmp(field, want, len) == 0;
  }
  fclose(f);
  return found;
}

/* `target` is the root of a mount, as a bind mount's target is. A source swapped for a link,
 * then swapped back before this check, could have had its bind land elsewhere (the target
 * resolved through the link) while the target itself, inside another mount, is the directory
 * cordon checked but no mount: that is caught here. */
static int mount_root(int fd, const char* target) {
  struct statx sx;
  memset(&sx, 0, sizeof sx);
  if (statx(fd, "", AT_EMPTY_PATH, STATX_INO, &sx) == 0 &&
      (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT))
    return (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
  return listed_mount_point(target);
}

/* `target` opened as it is written: a symlink anywhere on the way fails with ELOOP (the mount
 * may then have landed where the link led, not at the target). Before openat2 (Linux 5.6), the
 * plain path. */
static int open_target(const char* target) {
  struct open_how how;
  memset(&how, 0, sizeof how);
  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  int fd = (int)syscall(SYS_openat2, AT_FDCWD, target, &how, sizeof how);
  if (fd < 0 && errno == ENOSYS) fd = open(target, O_PATH | O_CLOEXEC);
  return fd;
}

/* The status of one check: 0 when the target is the mount cordon recorded. */
static uint32_t check_one(const char* target, uint64_t dev, uint64_t ino, uint32_t index) {
  int fd = open_target(target);
  if (fd < 0 && (errno == ELOOP || errno == EXDEV)) return kMountThroughLink | index;
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    int err = errno;
    if (fd >= 0) close(fd);
    return kMountUnreadable | ((uint32_t)(err & 0xff) << 16) | index;
  }
  uint32_t failed = 0;
  if ((uint64_t)st.st_dev != dev || (uint64_t)st.st_ino != ino || !mount_root(fd, target))
    failed = kMountMismatch | index;
  close(fd);
  return failed;
}

/* Reads the checks and makes each as it comes: 0 when all hold, the failure status of the first
 * that does not (the rest is still read, so that the argv follows), 1 on a malformed input. */
static uint32_t check_mounts(void) {
  uint32_t count = 0, failed = 0;
  if (read_u32(&count) != 0 || count > kMaxChecks) return 1;
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t len = 0;
    char target[kMaxTarget + 1];
    uint64_t dev = 0, ino = 0;
    if (read_u32(&len) != 0 || len == 0 || len > kMaxTarget || read_exact(target, len) != 0 ||
        read_u64(&dev) != 0 || read_u64(&ino) != 0)
      return 1;
    target[len] = '\0';
    if (!failed) failed = check_one(target, dev, ino, i);
  }
  return failed;
}

/* kRootIdentity and which ids are 0, or 0 when none is: however the `user` setting spelled
 * it, the image resolved it to these. */
static uint32_t check_identity(void) {
  uint32_t root = 0;
  gid_t groups[256];
  if (getuid() == 0 || geteuid() == 0) root |= kRootUid;
  if (getgid() == 0 || getegid() == 0) root |= kRootGid;
  int n = getgroups(256, groups);
  if (n < 0) root |= kRootGroup; /* more than it can see: refuse rather than guess */
  for (int i = 0; i < n; ++i)
    if (groups[i] == 0) root |= kRootGroup;
  return root ? kRootIdentity | root : 0;
}

static char** read_argv(void) {
  uint32_t count = 0;
  if (read_u32(&count) != 0 || count == 0 || count > kMaxArgs) return NULL;
  char** argv = calloc(count + 1, sizeof *argv);
  if (!argv) return NULL;
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t len = 0;
    if (read_u32(&len) != 0 || len > kMaxArg) return NULL;
    argv[i] = malloc(len + 1);
    if (!argv[i] || (len && read_exact(argv[i], len) != 0)) return NULL;
    argv[i][len] = '\0';
  }
  return argv;
}

/* docker kill (a stop request) reaches pid 1: pass it on to the command. */
static void forward(int sig) {
  if (child > 0) kill(child, sig);
}

/* The deadline: every other process of the container dies now. */
static void deadline(int sig) {
  (void)sig;
  expired = 1;
  kill(-1, SIGKILL);
}

/* The timer for the deadline, `ms` from now (0: none). */
static void arm_deadline(uint64_t ms) {
  if (ms == 0) return;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = deadline;
  sigaction(SIGALRM, &sa, NULL);
  struct itimerval t;
  memset(&t, 0, sizeof t);
  t.it_value.tv_sec = (time_t)(ms / 1000);
  t.it_value.tv_usec = (suseconds_t)(ms % 1000) * 1000;
  setitimer(ITIMER_REAL, &t, NULL);
}

static void write_all(int fd, const void* buf, size_t n) {
  const char* p = buf;
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    p += w;
    n -= (size_t)w;
  }
}

static void write_trailer(unsigned char* trailer, uint32_t code) {
  for (int i = 0; i < 4; ++i) trailer[kNonce + i] = (unsigned char)(code >> (24 - 8 * i));
  write_all(2, trailer, kNonce + 4);
  write_all(1, trailer, kNonce + 4);
}

/* --multicall: the applets `path` provides (its output of `--list`, or toybox's list), into
 * `out` (NUL-terminated, at most `size` bytes); 0 when it is no multi-call program. */
static size_t applets_of(const char* path, char* out, size_t size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0 || st.st_size > (64 << 20)) {
    if (fd >= 0) close(fd);
    return 0;
  }
  void* map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED) return 0;
  /* An ELF program whose own help names it a multi-call binary (nothing else is run). */
  size_t len = (size_t)st.st_size;
  int elf = len > 4 && memcmp(map, "\177ELF", 4) == 0;
  int busybox =
      elf && memmem(map, len, "BusyBox v", 9) && memmem(map, len, "multi-call binary", 17);
  int toybox =
      elf && !busybox && memmem(map, len, "Toybox", 6) && memmem(map, len, "multicall binary", 16);
  munmap(map, (size_t)st.st_size);
  if (!busybox && !toybox) return 0;
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) return 0;
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    dup2(null, 0);
    dup2(null, 2);
    dup2(pipefd[1], 1);
    alarm(5);
    char* busybox_argv[] = {"busybox", "--list", NULL};
    char* toybox_argv[] = {"toybox", NULL};
    execv(path, busybox ? busybox_argv : toybox_argv);
    _exit(127);
  }
  close(pipefd[1]);
  size_t n = 0;
  for (ssize_t got; pid > 0 && n + 1 < size && (got = read(pipefd[0], out + n, size - 1 - n)) != 0;)
    if (got > 0)
      n += (size_t)got;
    else if (errno != EINTR)
      break;
  close(pipefd[0]);
  if (pid > 0) waitpid(pid, NULL, 0);
  out[n] = '\0';
  return n;
}

/* --multicall: whether the applet list `list` (whitespace-separated) holds one of `names`. */
static int provides(char* list, char** names, int count) {
  for (char* word = strtok(list, " \t\n"); word; word = strtok(NULL, " \t\n"))
    for (int i = 0; i < count; ++i)
      if (strcmp(word, names[i]) == 0) return 1;
  return 0;
}

/* --multicall NAME... -- DIR...: prints the real path of every executable in the DIRs that is
 * a multi-call program providing one of the NAMEs (each file once). */
static int multicall_main(int argc, char** argv) {
  int sep = 2;
  while (sep < argc && strcmp(argv[sep], "--") != 0) ++sep;
  if (sep >= argc) return 2;
  static char list[1 << 20];
  static struct {
    dev_t dev;
    ino_t ino;
    int provides;
  } seen[8192];
  size_t nseen = 0;
  for (int d = sep + 1; d < argc; ++d) {
    DIR* dir = opendir(argv[d]);
    if (!dir) continue;
    for (struct dirent* e; (e = readdir(dir)) != NULL;) {
      char path[PATH_MAX], real[PATH_MAX];
      struct stat st;
      if (e->d_name[0] == '.' ||
          snprintf(path, sizeof path, "%s/%s", argv[d], e->d_name) >= (int)sizeof path ||
          stat(path, &st) != 0 || !S_ISREG(st.st_mode) || !(st.st_mode & 0111) ||
          !realpath(path, real))
        continue;
      /* Each file is asked once; every name of it (hard links, links) is printed. */
      size_t i = 0;
      while (i < nseen && !(seen[i].dev == st.st_dev && seen[i].ino == st.st_ino)) ++i;
      if (i == nseen) {
        if (nseen == sizeof seen / sizeof seen[0]) continue;
        seen[i].dev = st.st_dev;
        seen[i].ino = st.st_ino;
        seen[i].provides =
            applets_of(real, list, sizeof list) > 0 && provides(list, argv + 2, sep - 2);
        ++nseen;
      }
      /* The real path is masked; the name it was found by (a link) is named after '='. */
      if (seen[i].provides) printf(strcmp(path, real) ? "%s\n=%s\n" : "%s\n", real, path);
    }
    closedir(dir);
  }
  return fflush(stdout) == 0 ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "--multicall") == 0) return multicall_main(argc, argv);
  unsigned char trailer[kNonce + 4];
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  char** command = NULL;
  uint32_t flags = 0, failed = 0;
  uint64_t deadline_ms = 0;
  uint32_t expect_uid = 0;
  if (read_exact(trailer, kNonce) != 0 || read_u32(&flags) != 0 || read_u64(&deadline_ms) != 0 ||
      ((flags & kExpectUid) && read_u32(&expect_uid) != 0))
    return 125;
  if ((failed = check_mounts()) == 1 || (command = read_argv()) == NULL) return 125;
  if (!failed) failed = check_identity();
  /* A user the image names: cordon hid the host state of the uid the image's /etc/passwd gives
   * it, so it must be that uid (a runtime that resolved the name otherwise would run another). */
  if (!failed && (flags & kExpectUid) && (getuid() != expect_uid || geteuid() != expect_uid))
    failed = kOtherUid;
  if (failed) {
    /* Not the mounts cordon checked, or root: the command never starts. */
    write_trailer(trailer, failed);
    return 125;
  }
  arm_deadline(deadline_ms);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = forward;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  pid_t pid = fork();
  if (pid < 0) return 125;
  if (pid == 0) {
    memset(trailer, 0, sizeof trailer);
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    signal(SIGALRM, SIG_DFL);
    if (!(flags & kStdinFollows)) {
      int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
      if (null < 0 || dup2(null, 0) != 0) _exit(125);
    }
    execvp(command[0], command);
    int err = errno;
    /* The same shape as the daemon's init, so that cordon reports it the same way. */
    fprintf(stderr, "[FATAL cordon-waiter] exec %s failed: %s\n", command[0], strerror(err));
    _exit(err == ENOENT ? 127 : 126);
  }
  child = pid;
  if (expired) kill(-1, SIGKILL); /* the deadline passed before the fork returned */
  int status = 0, code = 125;
  for (;;) {
    int st = 0;
    pid_t got = waitpid(-1, &st, 0);
    if (got == pid) {
      status = st;
      break;
    }
    if (got < 0 && errno != EINTR) break;
  }
  struct itimerval off;
  memset(&off, 0, sizeof off);
  setitimer(ITIMER_REAL, &off, NULL);
  int timed_out = expired;
  code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  /* Nothing of the command outlives it: kill and reap the rest of the container (again, for
   * what forked while the first kill went round). */
  do {
    kill(-1, SIGKILL);
  } while (waitpid(-1, NULL, 0) > 0 || errno == EINTR);
  if (timed_out) {
    write_trailer(trailer, kDeadline);
    return 128 + SIGKILL;
  }
  write_trailer(trailer, (uint32_t)code);
  return code;
}
