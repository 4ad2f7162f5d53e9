/* The entry process (pid 1) of a warm-pool container. It waits on stdin for a 16-byte nonce
 * and the argv of the one command this container will run, then runs it as its child, so that
 * the rest of stdin is the command's. When the command ends, it kills and reaps every other
 * process of the container, then writes the nonce and the status (4 bytes, big-endian; 128+n
 * for a signal) as the last bytes of stderr and of stdout: once cordon has both, it has all the
 * output and the exit without waiting for the daemon, and nothing of the command is alive. The
 * nonce never reaches the command: it is read before the exec, and the waiter is not dumpable, so
 * /proc/1/mem is closed to it.
 *
 * Wire format of the input: nonce, a 4-byte big-endian count, then each argument as a 4-byte
 * big-endian length and its bytes. Built static, bind-mounted read-only into the container. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

enum { kNonce = 16, kMaxArgs = 65536, kMaxArg = 1 << 20 };

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

int main(void) {
  unsigned char trailer[kNonce + 4];
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  char** argv = NULL;
  if (read_exact(trailer, kNonce) != 0 || (argv = read_argv()) == NULL) return 125;
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
  for (int i = 0; i < 4; ++i) trailer[kNonce + i] = (unsigned char)((uint32_t)code >> (24 - 8 * i));
  write_all(2, trailer, sizeof trailer);
  write_all(1, trailer, sizeof trailer);
  return code;
}
