/* lifeprobe: process lifecycle, output and identity behaviour of a sandboxed command.
 *   lifeprobe exit N            exit with status N
 *   lifeprobe signal N          die of signal N (default disposition restored first)
 *   lifeprobe sleep MS          sleep MS milliseconds, then print "slept"
 *   lifeprobe spin MS           burn MS milliseconds of CPU time, then print "spun"
 *   lifeprobe survivors MARKER  leave a setsid child and a double-forked grandchild that ignore
 *                               SIGTERM and SIGHUP, then sleep forever with the probe (argv
 *                               carries MARKER; each of the three is named "lingerer")
 *   lifeprobe flood BYTES       write BYTES to stdout: "HEAD-MARK\n", filler, "\nTAIL-MARK\n"
 *   lifeprobe env               print the environment, one "env: NAME=VALUE" line each
 *   lifeprobe home              describe $HOME (owner, mode, entries), then write a file in it
 *   lifeprobe ids               print uids, the uid map, capabilities, NoNewPrivs, Seccomp */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

extern char** environ;

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

static double cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void spin(long ms) {
  volatile unsigned long x = 0;
  while (cpu_seconds() * 1000.0 < (double)ms) x++;
  probe_ok("spin", "spun %ld ms", ms);
}

static void die_of(int sig) {
  signal(sig, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  sigprocmask(SIG_UNBLOCK, &set, NULL);
  raise(sig);
  sleep_ms(1000);
  _exit(99);
}

/* Ignores the polite signals and sleeps forever: only SIGKILL (or a namespace teardown) ends it.
 * It names itself "lingerer", so a test counts the lingering processes and nothing else that
 * carries the marker (cordon's own command line does, and so does a keeper forked from it). */
static void linger(void) {
  prctl(PR_SET_NAME, "lingerer", 0, 0, 0);
  signal(SIGTERM, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  signal(SIGINT, SIG_IGN);
  for (;;) pause();
}

static void survivors(void) {
  pid_t child = fork();
  if (child == 0) {
    setsid();
    if (fork() == 0) {
      if (fork() == 0) linger(); /* the double-forked grandchild, reparented to init */
      _exit(0);
    }
    linger();
  }
  probe_ok("survivors", "left child %d", child);
  linger();
}

static void flood(long long bytes) {
  static char block[65536];
  memset(block, 'x', sizeof block);
  const char* head = "HEAD-MARK\n";
  const char* tail = "\nTAIL-MARK\n";
  long long left = bytes - (long long)strlen(head) - (long long)strlen(tail);
  if (write(1, head, strlen(head)) < 0) _exit(3);
  while (left > 0) {
    size_t n = left < (long long)sizeof block ? (size_t)left : sizeof block;
    ssize_t w = write(1, block, n);
    if (w < 0) _exit(3);
    left -= w;
  }
  if (write(1, tail, strlen(tail)) < 0) _exit(3);
}

static void print_env(void) {
  for (char** e = environ; *e != NULL; e++) printf("env: %s\n", *e);
}

static void home(void) {
  const char* h = getenv("HOME");
  struct stat st;
  if (h == NULL) {
    probe_err("home", ENOENT, "(HOME unset)");
    return;
  }
  if (stat(h, &st) != 0) {
    probe_err("home", errno, h);
    return;
  }
  char names[1024] = "";
  DIR* d = opendir(h);
  struct dirent* e;
  while (d != NULL && (e = readdir(d)) != NULL)
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strlen(names) + 300 < sizeof names)
      strcat(strcat(names, e->d_name), ",");
  if (d != NULL) closedir(d);
  probe_ok("home", "path=%s uid=%u mode=%04o entries=[%s] me=%u", h, st.st_uid, st.st_mode & 07777,
           names, getuid());
  char file[4096];
  snprintf(file, sizeof file, "%s/.lifeprobe-write", h);
  int fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  PROBE_CALL("home-write", fd, NULL);
  if (fd >= 0) close(fd);
}

/* Copies the lines of /proc/self/status that say who we are and what we may do. */
static void ids(void) {
  printf("ids: uid=%u euid=%u gid=%u\n", getuid(), geteuid(), getgid());
  char buf[8192];
  int fd = open("/proc/self/uid_map", O_RDONLY);
  ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
  if (fd >= 0) close(fd);
  buf[n > 0 ? n : 0] = 0;
  for (char* line = strtok(buf, "\n"); line != NULL; line = strtok(NULL, "\n"))
    printf("uid_map: %s\n", line);
  FILE* f = fopen("/proc/self/status", "r");
  while (f != NULL && fgets(buf, sizeof buf, f) != NULL)
    if (!strncmp(buf, "Cap", 3) || !strncmp(buf, "NoNewPrivs", 10) || !strncmp(buf, "Seccomp:", 8))
      printf("status: %s", buf);
  if (f != NULL) fclose(f);
}

int main(int argc, char** argv) {
  if (argc < 2) probe_usage("lifeprobe", "OP [ARG] (see the source)");
  const char* op = argv[1];
  const char* a = argc > 2 ? argv[2] : "0";
  if (!strcmp(op, "exit")) return atoi(a);
  if (!strcmp(op, "signal")) die_of(atoi(a));
  if (!strcmp(op, "sleep")) {
    sleep_ms(atol(a));
    probe_ok("sleep", "slept %s ms", a);
  } else if (!strcmp(op, "spin")) {
    spin(atol(a));
  } else if (!strcmp(op, "survivors")) {
    survivors();
  } else if (!strcmp(op, "flood")) {
    flood(atoll(a));
  } else if (!strcmp(op, "env")) {
    print_env();
  } else if (!strcmp(op, "home")) {
    home();
  } else if (!strcmp(op, "ids")) {
    ids();
  } else {
    probe_usage("lifeprobe", "unknown op");
  }
  return 0;
}
