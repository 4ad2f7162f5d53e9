/* raceop: the two sides of a race on a path, for a bounded time.
 *   raceop swap A B MS   exchange A and B (renameat2 RENAME_EXCHANGE) as often as it can for MS
 *                        milliseconds: "swap A: OK N" with the count, or the first error.
 *   raceop read P MS     open and read P as often as it can for MS milliseconds: "read P: OK
 *                        <content>" on the first read that succeeds, else the last error.
 * Exit status: 0 when the op succeeded at least once, 1 otherwise. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static int swap_loop(const char* a, const char* b, long ms) {
  char tag[4200];
  snprintf(tag, sizeof tag, "swap %s", a);
  long long end = now_ms() + ms;
  long count = 0;
  while (now_ms() < end) {
    if (renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0) {
      probe_err(tag, errno, count ? "(after some swaps)" : NULL);
      return 1;
    }
    count++;
  }
  probe_ok(tag, "%ld", count);
  return 0;
}

static int read_loop(const char* path, long ms) {
  char tag[4200];
  snprintf(tag, sizeof tag, "read %s", path);
  long long end = now_ms() + ms;
  int err = ENOENT;
  while (now_ms() < end) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      err = errno;
      continue;
    }
    char buf[201];
    ssize_t n = read(fd, buf, 200);
    err = errno;
    close(fd);
    if (n > 0) {
      buf[n] = 0;
      for (ssize_t i = 0; i < n; i++)
        if (buf[i] == '\n') buf[i] = '|';
      probe_ok(tag, "%s", buf);
      return 0;
    }
  }
  probe_err(tag, err, NULL);
  return 1;
}

int main(int argc, char** argv) {
  if (argc == 5 && strcmp(argv[1], "swap") == 0)
    return swap_loop(argv[2], argv[3], strtol(argv[4], NULL, 10));
  if (argc == 4 && strcmp(argv[1], "read") == 0)
    return read_loop(argv[2], strtol(argv[3], NULL, 10));
  probe_usage("raceop", "swap A B MS | read P MS");
  return 2;
}
