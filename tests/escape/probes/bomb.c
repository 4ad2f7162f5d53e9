/* bomb: resource exhaustion attempts, each bounded so that an unconfined run still ends.
 *   bomb mem MB              allocate and touch MB megabytes, 1 MB at a time
 *   bomb memkids KIDS MB     KIDS children each allocate and touch MB megabytes and wait;
 *                            report how many hold it at once and how many the kernel killed
 *   bomb fork MAX            fork up to MAX children that wait; report how many were made
 *   bomb fds MAX             open /dev/null up to MAX times; report how many succeeded
 *   bomb fsize MB FILE       write MB megabytes to FILE (SIGXFSZ ignored, so EFBIG shows)
 *   bomb tmpfill MB DIR      write 1 MB files into DIR until MB megabytes or a failure
 * Progress goes to stdout as it happens, so a kill leaves the last figure behind. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "probe.h"

#define MB (1024L * 1024L)

/* Allocates and touches `mb` megabytes; returns how many it got. */
static long grab(long mb, int verbose) {
  long got = 0;
  for (; got < mb; got++) {
    char* p = malloc(MB);
    if (p == NULL) break;
    memset(p, 1, MB);
    if (verbose && (got + 1) % 8 == 0) {
      printf("mem-progress: %ld\n", got + 1);
      fflush(stdout);
    }
  }
  return got;
}

static int op_mem(long mb) {
  long got = grab(mb, 1);
  if (got < mb) {
    probe_err("mem", ENOMEM, "");
    printf("mem-got: %ld\n", got);
    return 1;
  }
  probe_ok("mem", "%ld MB", got);
  return 0;
}

/* Kills and reaps the children a bomb made; never the process group, which may be shared. */
static void reap(const pid_t* pids, int n) {
  for (int i = 0; i < n; i++)
    if (pids[i] > 0) kill(pids[i], SIGKILL);
  for (int i = 0; i < n; i++)
    if (pids[i] > 0) waitpid(pids[i], NULL, 0);
}

/* Reaps the children that died; with `answered_too`, also those that had answered. Returns how
 * many it reaped; their pids become 0, so that nothing signals a pid that may be reused. */
static int reap_dead(pid_t* pids, int kids, const char* got, int answered_too) {
  int reaped = 0;
  for (int i = 0; i < kids; i++) {
    if (pids[i] <= 0 || (got[i] != 0 && !answered_too)) continue;
    if (waitpid(pids[i], NULL, WNOHANG) == pids[i]) {
      pids[i] = 0;
      reaped++;
    }
  }
  return reaped;
}

/* Every child holds its share until all have answered; what counts is how many hold it at the
 * same time, so a child the kernel killed after it answered does not count. A child killed
 * before it answers never does, so the wait is bounded. */
static int op_memkids(int kids, long mb) {
  int pipefd[2];
  pid_t pids[64];
  char got[64] = {0};
  if (kids > 64 || pipe(pipefd) != 0) return probe_result("memkids", -1, EINVAL, "");
  for (int i = 0; i < kids; i++) {
    pids[i] = fork();
    if (pids[i] == 0) {
      close(pipefd[0]);
      char answer[2] = {(char)i, grab(mb, 0) == mb ? 'y' : 'n'};
      if (write(pipefd[1], answer, 2) < 0) _exit(3);
      pause();
      _exit(0);
    }
  }
  close(pipefd[1]);
  int answered = 0, died = 0;
  struct pollfd p = {.fd = pipefd[0], .events = POLLIN};
  char answer[2];
  for (int waited = 0; answered + died < kids && waited < 100; waited++) {
    if (poll(&p, 1, 100) == 1 && read(pipefd[0], answer, 2) == 2 && answer[0] < kids) {
      answered++;
      got[(int)answer[0]] = answer[1];
    }
    died += reap_dead(pids, kids, got, 0);
  }
  usleep(100000); /* an OOM kill in flight lands before the count */
  died += reap_dead(pids, kids, got, 1);
  int held = 0;
  for (int i = 0; i < kids; i++) held += pids[i] > 0 && got[i] == 'y';
  probe_ok("memkids", "held=%d of %d x %ld MB, died=%d", held, kids, mb, died);
  reap(pids, kids);
  return 0;
}

static int op_fork(int max) {
  pid_t* pids = calloc((size_t)max + 1, sizeof *pids);
  int made = 0, err = 0;
  for (; made < max; made++) {
    pid_t pid = fork();
    if (pid < 0) {
      err = errno;
      break;
    }
    if (pid == 0) {
      pause();
      _exit(0);
    }
    pids[made] = pid;
  }
  if (err != 0)
    printf("fork: ERR %s (%s) after %d\n", probe_errname(err), strerror(err), made);
  else
    printf("fork: OK made %d\n", made);
  fflush(stdout);
  reap(pids, made);
  return err != 0;
}

static int op_fds(int max) {
  int opened = 0, err = 0;
  for (; opened < max; opened++) {
    if (open("/dev/null", O_RDONLY) < 0) {
      err = errno;
      break;
    }
  }
  if (err != 0)
    printf("fds: ERR %s (%s) after %d\n", probe_errname(err), strerror(err), opened);
  else
    printf("fds: OK opened %d\n", opened);
  return err != 0;
}

static int op_fsize(long mb, const char* file) {
  signal(SIGXFSZ, SIG_IGN);
  int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return probe_result("fsize", -1, errno, "(at open)");
  static char block[MB];
  long written = 0;
  for (; written < mb; written++) {
    if (write(fd, block, MB) != MB) {
      int err = errno;
      close(fd);
      printf("fsize: ERR %s (%s) after %ld\n", probe_errname(err), strerror(err), written);
      return 1;
    }
  }
  close(fd);
  probe_ok("fsize", "wrote %ld MB", written);
  return 0;
}

/* Fills a (tmpfs) directory with 1 MB files: memory no process holds, which only a total
 * memory limit (or a size cap on the tmpfs) can bound. */
static int op_tmpfill(long mb, const char* dir) {
  signal(SIGXFSZ, SIG_IGN);
  static char block[MB];
  memset(block, 7, sizeof block);
  long written = 0;
  for (; written < mb; written++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/tmpfill-%ld", dir, written);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int err = errno;
    if (fd >= 0 && write(fd, block, MB) != MB)
      err = errno;
    else if (fd >= 0)
      err = 0;
    if (fd >= 0) close(fd);
    if (err != 0) {
      printf("tmpfill: ERR %s (%s) after %ld\n", probe_errname(err), strerror(err), written);
      return 1;
    }
    if ((written + 1) % 8 == 0) {
      printf("tmpfill-progress: %ld\n", written + 1);
      fflush(stdout);
    }
  }
  probe_ok("tmpfill", "wrote %ld MB", written);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 3) probe_usage("bomb", "OP ARGS (see the source)");
  const char* op = argv[1];
  if (!strcmp(op, "mem")) return op_mem(atol(argv[2]));
  if (!strcmp(op, "memkids") && argc > 3) return op_memkids(atoi(argv[2]), atol(argv[3]));
  if (!strcmp(op, "fork")) return op_fork(atoi(argv[2]));
  if (!strcmp(op, "fds")) return op_fds(atoi(argv[2]));
  if (!strcmp(op, "fsize") && argc > 3) return op_fsize(atol(argv[2]), argv[3]);
  if (!strcmp(op, "tmpfill") && argc > 3) return op_tmpfill(atol(argv[2]), argv[3]);
  probe_usage("bomb", "unknown op");
  return 2;
}
