/* Process, limit and identity verbs: memory, forks, threads, descriptors, CPU time, spawning,
 * visibility of other processes, ptrace, credentials, escape attempts and IPC objects. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

#define MIB (1024 * 1024)
#define MAX_COUNT 1000000L

/* Keeps the optimizer from discarding allocations that are never read. */
static void* volatile alloc_sink;

int verb_alloc(char** args) {
  long mb;
  if (parse_long(args[0], 0, 1L << 30, &mb)) return bad_arg("alloc", args[0]);
  for (long i = 0; i < mb; i++) {
    char* p = malloc(MIB);
    if (p == NULL) return denied("alloc", describe("malloc after %ld of %ld MiB", i, mb));
    memset(p, 0xa5, MIB);
    alloc_sink = p;
  }
  return ok("alloc %ld MiB", mb);
}

int verb_forks(char** args) {
  long n;
  if (parse_long(args[0], 0, MAX_COUNT, &n)) return bad_arg("forks", args[0]);
  pid_t* pids = calloc((size_t)n + 1, sizeof *pids);
  if (pids == NULL) return denied("forks", "calloc");
  fflush(stdout);
  long made = 0;
  int err = 0;
  for (; made < n; made++) {
    pid_t pid = fork();
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the probe */
      for (;;) pause();
    }
    if (pid < 0) {
      err = errno;
      break;
    }
    pids[made] = pid;
  }
  for (long i = 0; i < made; i++) kill(pids[i], SIGKILL);
  for (long i = 0; i < made; i++) waitpid(pids[i], NULL, 0);
  free(pids);
  if (made == n) return ok("forks %ld", n);
  errno = err;
  return denied("forks", describe("fork after %ld of %ld", made, n));
}

static void* nap(void* arg) {
  (void)arg;
  struct timespec ts = {0, 50 * 1000 * 1000};
  nanosleep(&ts, NULL);
  return NULL;
}

int verb_threads(char** args) {
  long n;
  if (parse_long(args[0], 0, MAX_COUNT, &n)) return bad_arg("threads", args[0]);
  pthread_t* threads = calloc((size_t)n + 1, sizeof *threads);
  if (threads == NULL) return denied("threads", "calloc");
  /* Small stacks, so the count limit is what gets measured rather than address space. */
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64 * 1024);
  long made = 0;
  int err = 0;
  for (; made < n; made++) {
    err = pthread_create(&threads[made], &attr, nap, NULL);
    if (err != 0) break;
  }
  for (long i = 0; i < made; i++) pthread_join(threads[i], NULL);
  pthread_attr_destroy(&attr);
  free(threads);
  if (made == n) return ok("threads %ld", n);
  errno = err;
  return denied("threads", describe("pthread_create after %ld of %ld", made, n));
}

int verb_files(char** args) {
  long n;
  if (parse_long(args[0], 0, MAX_COUNT, &n)) return bad_arg("files", args[0]);
  for (long made = 0; made < n; made++) {
    if (open("/dev/null", O_RDONLY) < 0) {
      return denied("files", describe("open /dev/null after %ld of %ld", made, n));
    }
  }
  return ok("files %ld", n);
}

/* Burns CPU for args[0] seconds of wall time; 0, or 2 for a bad argument. */
static int verb_spin_quietly(char** args) {
  double seconds;
  if (parse_seconds(args[0], &seconds)) return 2;
  volatile unsigned long burn = 0;
  double end = now_seconds() + seconds;
  while (now_seconds() < end) {
    for (unsigned long i = 0; i < 100000; i++) burn += i;
  }
  return 0;
}

int verb_spin(char** args) {
  if (verb_spin_quietly(args) != 0) return bad_arg("spin", args[0]);
  return ok("spin %s", args[0]);
}

/* The share of one CPU this process got while spinning for SECONDS of wall time: "ok" when it
 * got more than PERCENT (nothing held it back), "denied" when at most PERCENT. */
int verb_cpu_share(char** args) {
  double seconds;
  long percent;
  if (parse_seconds(args[0], &seconds)) return bad_arg("cpu-share", args[0]);
  if (parse_long(args[1], 1, 100, &percent)) return bad_arg("cpu-share", args[1]);
  struct timespec cpu0, cpu1;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu0);
  double start = now_seconds();
  char* spin_args[] = {args[0], NULL};
  verb_spin_quietly(spin_args);
  double wall = now_seconds() - start;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu1);
  double cpu = (double)(cpu1.tv_sec - cpu0.tv_sec) + (double)(cpu1.tv_nsec - cpu0.tv_nsec) / 1e9;
  long got = wall > 0 ? (long)(100.0 * cpu / wall) : 0;
  if (got > percent) return ok("cpu-share got %ld%% of a CPU", got);
  errno = 0;
  return denied("cpu-share", describe("got only %ld%% of a CPU (at most %ld%%)", got, percent));
}

/* Child side of spawn: exec, or report errno through the close-on-exec pipe. */
static void spawn_child(const char* path, int report_fd) {
  char* argv[] = {(char*)path, NULL};
  execv(path, argv);
  int err = errno;
  if (write(report_fd, &err, sizeof err) < 0) {
    /* Nothing more to do: exit status 127 still says exec failed. */
  }
  _exit(127);
}

int verb_spawn(char** args) {
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) return denied("spawn", "pipe");
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) return denied("spawn", "fork");
  if (pid == 0) {
    close(pipefd[0]);
    spawn_child(args[0], pipefd[1]);
  }
  close(pipefd[1]);
  int exec_err = 0;
  ssize_t got = read(pipefd[0], &exec_err, sizeof exec_err);
  close(pipefd[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (got == (ssize_t)sizeof exec_err) {
    errno = exec_err;
    return denied("spawn", describe("exec %s", args[0]));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return ok("spawn %s exited 0", args[0]);
  if (WIFSIGNALED(status)) {
    return refused("spawn", args[0], describe("killed by signal %d", WTERMSIG(status)));
  }
  return refused("spawn", args[0], describe("exited %d", WEXITSTATUS(status)));
}

int verb_kill(char** args) {
  long pid;
  if (parse_long(args[0], INT32_MIN, INT32_MAX, &pid)) return bad_arg("kill", args[0]);
  if (kill((pid_t)pid, 0) != 0) return denied("kill", args[0]);
  return ok("kill %ld visible", pid);
}

int verb_pids(char** args) {
  (void)args;
  DIR* d = opendir("/proc");
  if (d == NULL) return denied("pids", "/proc");
  long count = 0, max = 0;
  struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    if (!isdigit((unsigned char)e->d_name[0])) continue;
    char* end = NULL;
    long pid = strtol(e->d_name, &end, 10);
    if (*end != '\0') continue;
    count++;
    if (pid > max) max = pid;
  }
  closedir(d);
  return ok("pids %ld max=%ld", count, max);
}

int verb_ptrace(char** args) {
  long pid;
  if (parse_long(args[0], 1, INT32_MAX, &pid)) return bad_arg("ptrace", args[0]);
  /* SEIZE does not stop the tracee, so our exit detaches it cleanly. */
  if (ptrace(PTRACE_SEIZE, (pid_t)pid, NULL, NULL) != 0) return denied("ptrace", args[0]);
  return ok("ptrace %ld attached", pid);
}

/* Copies the value of "KEY:\t..." from a /proc status text into OUT ("?" if absent). */
static void status_field(const char* text, const char* key, char* out, size_t size) {
  snprintf(out, size, "?");
  const char* p = strstr(text, key);
  if (p == NULL) return;
  p += strlen(key);
  p += strspn(p, " \t");
  size_t n = strcspn(p, "\n");
  if (n >= size) n = size - 1;
  memcpy(out, p, n);
  out[n] = '\0';
}

int verb_identity(char** args) {
  (void)args;
  char text[8192] = "";
  int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    ssize_t n = read(fd, text, sizeof text - 1);
    text[n > 0 ? n : 0] = '\0';
    close(fd);
  }
  char caps[64], nnp[16];
  status_field(text, "\nCapEff:", caps, sizeof caps);
  status_field(text, "\nNoNewPrivs:", nnp, sizeof nnp);
  return ok("identity uid=%ld euid=%ld gid=%ld groups=%d caps=%s nnp=%s", (long)getuid(),
            (long)geteuid(), (long)getgid(), getgroups(0, NULL), caps, nnp);
}

int verb_setuid0(char** args) {
  (void)args;
  int uid_rc = setuid(0);
  int uid_err = errno;
  int gid_rc = setgid(0);
  if (uid_rc == 0 || gid_rc == 0) {
    return ok("setuid0 setuid=%s setgid=%s", uid_rc == 0 ? "ok" : "failed",
              gid_rc == 0 ? "ok" : "failed");
  }
  errno = uid_err;
  return denied("setuid0", "setuid(0) and setgid(0)");
}

/* Like a daemon, the survivor drops the caller's stdio so only FILE shows it is alive. */
static void survivor_loop(const char* file) {
  int null_fd = open("/dev/null", O_RDWR);
  for (int i = 0; i < 3; i++) {
    if (null_fd >= 0) {
      dup2(null_fd, i);
    } else {
      close(i);
    }
  }
  if (null_fd > 2) close(null_fd);
  signal(SIGTERM, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  signal(SIGINT, SIG_IGN);
  struct timespec tick = {0, 20 * 1000 * 1000};
  for (;;) {
    int fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) {
      if (write(fd, "s", 1) < 0) {
        /* Keep trying: the file is the only evidence of survival. */
      }
      close(fd);
    }
    nanosleep(&tick, NULL);
  }
}

int verb_survive(char** args) {
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) return denied("survive", "pipe");
  fflush(stdout);
  pid_t child = fork();
  if (child < 0) return denied("survive", "fork");
  if (child == 0) {
    close(pipefd[0]);
    setsid();
    pid_t grandchild = fork();
    if (grandchild != 0) _exit(grandchild < 0 ? 1 : 0);
    pid_t self = getpid();
    if (write(pipefd[1], &self, sizeof self) < 0) _exit(1);
    close(pipefd[1]);
    survivor_loop(args[0]);
  }
  close(pipefd[1]);
  while (waitpid(child, NULL, 0) < 0 && errno == EINTR) {
  }
  pid_t survivor = 0;
  if (read(pipefd[0], &survivor, sizeof survivor) != (ssize_t)sizeof survivor) {
    return refused("survive", "double fork", "grandchild did not start");
  }
  close(pipefd[0]);
  ok("survive pid=%ld", (long)survivor);
  for (;;) pause();
}

int verb_ignore_term(char** args) {
  double seconds;
  if (parse_seconds(args[0], &seconds)) return bad_arg("ignore-term", args[0]);
  signal(SIGTERM, SIG_IGN);
  ok("ignore-term");
  sleep_seconds(seconds);
  return 0;
}

static int parse_key(const char* s, key_t* key) {
  long v;
  if (parse_long(s, INT32_MIN, UINT32_MAX, &v)) return -1;
  *key = (key_t)(uint32_t)v; /* ftok-style keys may be printed unsigned */
  return 0;
}

int verb_sysv(char** args) {
  key_t key;
  if (parse_key(args[0], &key)) return bad_arg("sysv", args[0]);
  int id = shmget(key, 0, 0);
  if (id < 0) return denied("sysv", describe("shmget %s", args[0]));
  return ok("sysv %s id=%d", args[0], id);
}

int verb_sysv_create(char** args) {
  key_t key;
  if (parse_key(args[0], &key)) return bad_arg("sysv-create", args[0]);
  int id = shmget(key, 4096, IPC_CREAT | 0600);
  if (id < 0) return denied("sysv-create", describe("shmget %s", args[0]));
  return ok("sysv-create %s id=%d", args[0], id);
}

int verb_sysv_remove(char** args) {
  key_t key;
  if (parse_key(args[0], &key)) return bad_arg("sysv-remove", args[0]);
  int id = shmget(key, 0, 0);
  if (id < 0) return denied("sysv-remove", describe("shmget %s", args[0]));
  if (shmctl(id, IPC_RMID, NULL) != 0) return denied("sysv-remove", describe("shmctl %d", id));
  return ok("sysv-remove %s id=%d", args[0], id);
}

int verb_mq(char** args) {
  char name[256];
  snprintf(name, sizeof name, "/%s", args[0][0] == '/' ? args[0] + 1 : args[0]);
  mqd_t q = mq_open(name, O_RDONLY);
  if (q == (mqd_t)-1) return denied("mq", name);
  mq_close(q);
  return ok("mq %s", name);
}
