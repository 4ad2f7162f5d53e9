/* Filesystem verbs: reads (direct, through a directory descriptor, through links), listing,
 * writes, directory creation, exec and the file-size limit. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "probe.h"

#define READ_MAX 4096
#define PREVIEW 64
#define MIB (1024 * 1024)

/* Reads up to READ_MAX bytes from FD, closes it, and reports a printable preview. */
static int report_read(const char* verb, int fd, const char* what) {
  char buf[READ_MAX];
  ssize_t n;
  do {
    n = read(fd, buf, sizeof buf);
  } while (n < 0 && errno == EINTR);
  int err = errno;
  close(fd);
  if (n < 0) {
    errno = err;
    return denied(verb, what);
  }
  char shown[PREVIEW + 1];
  size_t len = (size_t)n < PREVIEW ? (size_t)n : PREVIEW;
  for (size_t i = 0; i < len; i++) shown[i] = isprint((unsigned char)buf[i]) ? buf[i] : '.';
  shown[len] = '\0';
  return ok("%s %zd bytes: %s", verb, n, shown);
}

int verb_read(char** args) {
  int fd = open(args[0], O_RDONLY | O_CLOEXEC);
  if (fd < 0) return denied("read", args[0]);
  return report_read("read", fd, args[0]);
}

int verb_read_via_dir(char** args) {
  int dirfd = open(args[0], O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0) return denied("read-via-dir", describe("open %s", args[0]));
  int fd = openat(dirfd, args[1], O_RDONLY | O_CLOEXEC);
  int err = errno;
  close(dirfd);
  if (fd < 0) {
    errno = err;
    return denied("read-via-dir", describe("openat %s/%s", args[0], args[1]));
  }
  return report_read("read-via-dir", fd, args[1]);
}

long count_entries(const char* dir) {
  DIR* d = opendir(dir);
  if (d == NULL) return -1;
  long n = 0;
  struct dirent* e;
  errno = 0;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
  }
  int err = errno;
  closedir(d);
  errno = err;
  return err != 0 ? -1 : n;
}

int verb_list(char** args) {
  long n = count_entries(args[0]);
  if (n < 0) return denied("list", args[0]);
  return ok("list %s %ld entries", args[0], n);
}

int verb_write(char** args) {
  int fd = open(args[0], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return denied("write", describe("open %s", args[0]));
  if (write(fd, "x", 1) != 1) {
    int err = errno;
    close(fd);
    errno = err;
    return denied("write", describe("write %s", args[0]));
  }
  if (close(fd) != 0) return denied("write", describe("close %s", args[0]));
  return ok("write %s", args[0]);
}

int verb_mkdir(char** args) {
  if (mkdir(args[0], 0755) != 0) return denied("mkdir", args[0]);
  return ok("mkdir %s", args[0]);
}

int verb_link(char** args) {
  if (link(args[0], args[1]) != 0) {
    return denied("link", describe("link %s -> %s", args[1], args[0]));
  }
  int fd = open(args[1], O_RDONLY | O_CLOEXEC);
  if (fd < 0) return denied("link", describe("read %s", args[1]));
  return report_read("link", fd, describe("read %s", args[1]));
}

int verb_symlink_read(char** args) {
  if (symlink(args[0], args[1]) != 0) {
    return denied("symlink-read", describe("symlink %s -> %s", args[1], args[0]));
  }
  int fd = open(args[1], O_RDONLY | O_CLOEXEC);
  if (fd < 0) return denied("symlink-read", describe("read %s", args[1]));
  return report_read("symlink-read", fd, describe("read %s", args[1]));
}

int verb_exec(char** args) {
  fflush(stdout);
  execv(args[0], args); /* args is NULL-terminated: PATH, ARGS... */
  return denied("exec", args[0]);
}

static int write_all(int fd, const char* buf, size_t len, long long* total) {
  while (len > 0) {
    ssize_t n = write(fd, buf, len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) {
      errno = ENOSPC;
      return -1;
    }
    buf += n;
    len -= (size_t)n;
    *total += n;
  }
  return 0;
}

int verb_write_size(char** args) {
  long mb;
  if (parse_long(args[0], 0, 1L << 20, &mb)) return bad_arg("write-size", args[0]);
  /* Without this, exceeding RLIMIT_FSIZE kills us instead of returning EFBIG. */
  signal(SIGXFSZ, SIG_IGN);
  char* chunk = malloc(MIB);
  if (chunk == NULL) return denied("write-size", "malloc");
  memset(chunk, 'w', MIB);
  int fd = open(args[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return denied("write-size", describe("open %s", args[1]));
  long long total = 0;
  for (long i = 0; i < mb; i++) {
    if (write_all(fd, chunk, MIB, &total) != 0) {
      return denied("write-size", describe("%s after %lld bytes", args[1], total));
    }
  }
  if (close(fd) != 0) return denied("write-size", describe("close %s", args[1]));
  free(chunk);
  return ok("write-size %s %ld MiB", args[1], mb);
}
