/* The entry process (pid 1) of every cordon container, one-shot or pooled. It waits on stdin
 * for a 16-byte nonce, the mount checks and the argv of the one command this container will run,
 * then runs it as its child, so that the rest of stdin is the command's. When the command ends,
 * it kills and reaps every other process of the container, then writes the nonce and the status
 * (4 bytes, big-endian; 128+n for a signal) as the last bytes of stderr and of stdout: once
 * cordon has both, it has all the output and the exit, and nothing of the command is alive. The
 * nonce never reaches the command: it is read before the exec, and the waiter is not dumpable, so
 * /proc/1/mem is closed to it.
 *
 * Before the command, it checks every bind mount cordon asked for: the mount's target here must
 * be the root of a mount, and stat() of it must give the device and inode cordon recorded when it
 * checked the source on the host (a bind mount keeps them), so that a source path swapped on the
 * host after that check (a symlink renamed into it) is caught before anything runs. On a
 * mismatch or a failed stat, nothing is run: the trailer's status is kMountMismatch or
 * kMountUnreadable (above any exit status) plus the index of the failed check, and cordon
 * refuses the run.
 *
 * Wire format of the input (integers big-endian): nonce; flags (4 bytes: bit 0, the rest of
 * stdin is the command's, else its stdin is /dev/null); the count of checks (4 bytes), each a
 * 4-byte length and the target's bytes, then the device and the inode (8 bytes each); the count
 * of arguments (4 bytes), each a 4-byte length and its bytes. Built static, bind-mounted
 * read-only into the container. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

enum { kNonce = 16, kMaxArgs = 65536, kMaxArg = 1 << 20, kMaxChecks = 4096, kMaxTarget = 4096 };
enum { kStdinFollows = 1 };
/* Trailer statuses of a failed check (waiter_blob.hpp): + the check's index, and for a failed
 * stat its errno (bits 16-23). */
#define kMountMismatch 0x01000000u
#define kMountUnreadable 0x02000000u

static volatile pid_t child = 0;

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
static int mount_root(const char* target) {
  struct statx sx;
  memset(&sx, 0, sizeof sx);
  if (statx(AT_FDCWD, target, 0, STATX_INO, &sx) == 0 &&
      (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT))
    return (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
  return listed_mount_point(target);
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
    if (failed) continue;
    struct stat st;
    if (stat(target, &st) != 0)
      failed = kMountUnreadable | ((uint32_t)(errno & 0xff) << 16) | i;
    else if ((uint64_t)st.st_dev != dev || (uint64_t)st.st_ino != ino || !mount_root(target))
      failed = kMountMismatch | i;
  }
  return failed;
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

int main(void) {
  unsigned char trailer[kNonce + 4];
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  char** argv = NULL;
  uint32_t flags = 0, failed = 0;
  if (read_exact(trailer, kNonce) != 0 || read_u32(&flags) != 0) return 125;
  if ((failed = check_mounts()) == 1 || (argv = read_argv()) == NULL) return 125;
  if (failed) {
    /* Not the mounts cordon checked: the command never starts. */
    write_trailer(trailer, failed);
    return 125;
  }
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
    if (!(flags & kStdinFollows)) {
      int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
      if (null < 0 || dup2(null, 0) != 0) _exit(125);
    }
    execvp(argv[0], argv);
    int err = errno;
    /* The same shape as the daemon's init, so that cordon reports it the same way. */
    fprintf(stderr, "[FATAL cordon-waiter] exec %s failed: %s\n", argv[0], strerror(err));
    _exit(err == ENOENT ? 127 : 126);
  }
  child = pid;
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
  code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  /* Nothing of the command outlives it: kill and reap the rest of the container. */
  kill(-1, SIGKILL);
  while (waitpid(-1, NULL, 0) > 0 || errno == EINTR) {
  }
  write_trailer(trailer, (uint32_t)code);
  return code;
}
