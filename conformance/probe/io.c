/* Reporting helpers and the I/O verbs: environment, $HOME, stdin, output payloads, exit codes,
 * signals and sleeping. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

extern char** environ;

#define LINE_BYTES 14

int ok(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("ok ", stdout);
  vprintf(fmt, ap);
  va_end(ap);
  putchar('\n');
  fflush(stdout);
  return 0;
}

int refused(const char* verb, const char* what, const char* reason) {
  printf("denied %s: %s: %s\n", verb, what, reason);
  fflush(stdout);
  return 1;
}

int denied(const char* verb, const char* what) {
  int err = errno;
  return refused(verb, what, err != 0 ? strerror(err) : "limited");
}

int bad_arg(const char* verb, const char* arg) {
  fprintf(stderr, "cordon-probe %s: invalid argument '%s'\n", verb, arg);
  return 2;
}

const char* describe(const char* fmt, ...) {
  static char buf[1024];
  int err = errno;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  errno = err;
  return buf;
}

double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void sleep_seconds(double seconds) {
  time_t whole = (time_t)seconds;
  struct timespec ts = {whole, (long)((seconds - (double)whole) * 1e9)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

int verb_env(char** args) {
  (void)args;
  int n = 0;
  while (environ != NULL && environ[n] != NULL) n++;
  ok("env %d", n);
  for (int i = 0; i < n; i++) puts(environ[i]);
  return 0;
}

/* 1 when a file can be made (and is removed again) in HOME. */
static int home_writable(const char* home) {
  char path[4096];
  snprintf(path, sizeof path, "%s/.cordon-probe-%ld", home, (long)getpid());
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return 0;
  close(fd);
  unlink(path);
  return 1;
}

int verb_home(char** args) {
  (void)args;
  const char* home = getenv("HOME");
  if (home == NULL) return refused("home", "HOME", "unset");
  struct stat st;
  if (stat(home, &st) != 0) return denied("home", describe("stat %s", home));
  long entries = count_entries(home); /* -1: exists but cannot be listed; counted before the test */
  return ok("home %s mode=%03o entries=%ld uid=%ld writable=%d", home,
            (unsigned)(st.st_mode & 07777), entries, (long)st.st_uid, home_writable(home));
}

int verb_stdin(char** args) {
  (void)args;
  unsigned char buf[65536];
  unsigned long long total = 0;
  uint32_t sum = 0;
  for (;;) {
    ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return denied("stdin", "read");
    }
    total += (unsigned long long)n;
    for (ssize_t i = 0; i < n; i++) sum += buf[i];
  }
  return ok("stdin %llu bytes sum=%lu", total, (unsigned long)sum);
}

/* Writes "line %08ld\n" for NUM into OUT; fixed width so every line is LINE_BYTES long. */
static void fill_line(char* out, long num) {
  memcpy(out, "line ", 5);
  for (int i = 12; i >= 5; i--) {
    out[i] = (char)('0' + num % 10);
    num /= 10;
  }
  out[13] = '\n';
}

static int write_full(int fd, const char* buf, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, buf, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    buf += n;
    len -= (size_t)n;
  }
  return 0;
}

int verb_print(char** args) {
  long total;
  if (parse_long(args[0], 0, __LONG_MAX__, &total)) return bad_arg("print", args[0]);
  static char buf[LINE_BYTES * 4096];
  long line = 1;
  long left = total;
  while (left > 0) {
    size_t used = 0;
    while (used < sizeof buf && (long)used < left) {
      fill_line(buf + used, line++ % 100000000);
      used += LINE_BYTES;
    }
    size_t chunk = (long)used < left ? used : (size_t)left;
    if (write_full(STDOUT_FILENO, buf, chunk) != 0) {
      fprintf(stderr, "cordon-probe print: write: %s\n", strerror(errno));
      return 1;
    }
    left -= (long)chunk;
  }
  return 0;
}

int verb_exit(char** args) {
  long code;
  if (parse_long(args[0], 0, 255, &code)) return bad_arg("exit", args[0]);
  return (int)code;
}

int verb_signal(char** args) {
  long sig;
  if (parse_long(args[0], 1, 64, &sig)) return bad_arg("signal", args[0]);
  signal((int)sig, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, (int)sig);
  sigprocmask(SIG_UNBLOCK, &set, NULL);
  fflush(stdout);
  raise((int)sig);
  /* Reached for signals whose default action is to ignore, or after SIGSTOP/SIGCONT. */
  fprintf(stderr, "cordon-probe signal: still alive after signal %ld\n", sig);
  return 2;
}

int verb_sleep(char** args) {
  double seconds;
  if (parse_seconds(args[0], &seconds)) return bad_arg("sleep", args[0]);
  sleep_seconds(seconds);
  return ok("sleep %s", args[0]);
}
