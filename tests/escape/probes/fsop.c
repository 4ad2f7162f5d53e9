/* fsop: a sequence of filesystem operations, one report line each.
 *   fsop OP ARGS [OP ARGS ...]
 * Ops (tag "<op> <first-arg>"): read P, list P, stat P, create P, append P, otrunc P, truncate P,
 * rename A B, chmod P OCTAL, utime P, unlink P, mkdir P, rmdir P, link A B, symlink TARGET LINK,
 * opath P (O_PATH then reopen through /proc/self/fd), readfd N, procfd N, fds, exec P (last),
 * execwith INTERP P (last: run INTERP with P as its argument, e.g. the dynamic loader).
 * Exit status: 0 when every op succeeded, 1 otherwise. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "probe.h"

static char tag[4096];

/* Reads up to 200 bytes of fd and reports them with newlines escaped. */
static int report_content(int fd) {
  char buf[201];
  ssize_t n = read(fd, buf, 200);
  int err = errno;
  close(fd);
  if (n < 0) {
    probe_err(tag, err, "(at read)");
    return 1;
  }
  buf[n] = 0;
  /* One line per op, printable: newlines become '|', other control or binary bytes '.'. */
  for (ssize_t i = 0; i < n; i++) {
    if (buf[i] == '\n')
      buf[i] = '|';
    else if ((unsigned char)buf[i] < 0x20 || (unsigned char)buf[i] >= 0x7f)
      buf[i] = '.';
  }
  probe_ok(tag, "%zd bytes: %s", n, buf);
  return 0;
}

static int op_read(const char* path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return probe_result(tag, -1, errno, "(at open)");
  return report_content(fd);
}

static int op_list(const char* path) {
  DIR* d = opendir(path);
  if (d == NULL) return probe_result(tag, -1, errno, "(at opendir)");
  char names[2048] = "";
  struct dirent* e;
  errno = 0;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    if (strlen(names) + strlen(e->d_name) + 2 < sizeof names) {
      strcat(names, e->d_name);
      strcat(names, ",");
    }
  }
  int err = errno;
  closedir(d);
  if (err != 0) return probe_result(tag, -1, err, "(at readdir)");
  probe_ok(tag, "[%s]", names);
  return 0;
}

static int op_stat(const char* path) {
  struct stat st;
  if (stat(path, &st) != 0) return probe_result(tag, -1, errno, NULL);
  probe_ok(tag, "mode=%04o uid=%u size=%lld", st.st_mode & 07777, st.st_uid, (long long)st.st_size);
  return 0;
}

/* Opens with `flags` and writes a short text; O_TRUNC alone writes nothing. */
static int op_write(const char* path, int flags, const char* text) {
  int fd = open(path, flags | O_CLOEXEC, 0644);
  if (fd < 0) return probe_result(tag, -1, errno, "(at open)");
  ssize_t n = text ? write(fd, text, strlen(text)) : 0;
  int err = errno;
  close(fd);
  return probe_result(tag, n, err, "(at write)");
}

static int op_opath(const char* path) {
  int pfd = open(path, O_PATH | O_CLOEXEC);
  if (pfd < 0) return probe_result(tag, -1, errno, "(at open O_PATH)");
  char link[64];
  snprintf(link, sizeof link, "/proc/self/fd/%d", pfd);
  int fd = open(link, O_RDONLY | O_CLOEXEC);
  int err = errno;
  close(pfd);
  if (fd < 0) return probe_result(tag, -1, err, "(at reopen)");
  return report_content(fd);
}

static int op_procfd(const char* num) {
  char link[64];
  snprintf(link, sizeof link, "/proc/self/fd/%s", num);
  return op_read(link);
}

static int op_readfd(const char* num) {
  int fd = atoi(num);
  char buf[201];
  ssize_t n = read(fd, buf, 200);
  if (n < 0) return probe_result(tag, -1, errno, NULL);
  buf[n] = 0;
  probe_ok(tag, "%zd bytes: %s", n, buf);
  return 0;
}

/* Lists the open descriptors, leaving out the one opendir itself uses. */
static int op_fds(void) {
  DIR* d = opendir("/proc/self/fd");
  if (d == NULL) return probe_result(tag, -1, errno, "(at opendir)");
  char names[1024] = "";
  struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.' || atoi(e->d_name) == dirfd(d)) continue;
    if (strlen(names) + strlen(e->d_name) + 2 < sizeof names) {
      strcat(names, e->d_name);
      strcat(names, ",");
    }
  }
  closedir(d);
  probe_ok(tag, "[%s]", names);
  return 0;
}

static int op_utime(const char* path) {
  struct timeval tv[2] = {{1, 0}, {1, 0}};
  return PROBE_CALL(tag, utimes(path, tv), NULL);
}

static int op_exec(const char* path) {
  char* const argv[] = {(char*)path, NULL};
  execv(path, argv);
  return probe_result(tag, -1, errno, NULL);
}

static int op_execwith(const char* interp, const char* path) {
  char* const argv[] = {(char*)interp, (char*)path, NULL};
  execv(interp, argv);
  return probe_result(tag, -1, errno, NULL);
}

/* The number of arguments an op takes, or -1 for an unknown op. */
static int arity(const char* op) {
  static const char* two[] = {"rename", "chmod", "link", "symlink", "execwith"};
  static const char* one[] = {"read",   "list",     "stat",   "create", "append",
                              "otrunc", "truncate", "utime",  "unlink", "mkdir",
                              "rmdir",  "opath",    "readfd", "procfd", "exec"};
  for (size_t i = 0; i < sizeof two / sizeof *two; i++)
    if (strcmp(op, two[i]) == 0) return 2;
  for (size_t i = 0; i < sizeof one / sizeof *one; i++)
    if (strcmp(op, one[i]) == 0) return 1;
  return strcmp(op, "fds") == 0 ? 0 : -1;
}

static int run_op(const char* op, char** a) {
  if (!strcmp(op, "read")) return op_read(a[0]);
  if (!strcmp(op, "list")) return op_list(a[0]);
  if (!strcmp(op, "stat")) return op_stat(a[0]);
  if (!strcmp(op, "create")) return op_write(a[0], O_WRONLY | O_CREAT | O_EXCL, "planted\n");
  if (!strcmp(op, "append")) return op_write(a[0], O_WRONLY | O_APPEND, "appended\n");
  if (!strcmp(op, "otrunc")) return op_write(a[0], O_WRONLY | O_TRUNC, NULL);
  if (!strcmp(op, "truncate")) return PROBE_CALL(tag, truncate(a[0], 0), NULL);
  if (!strcmp(op, "rename")) return PROBE_CALL(tag, rename(a[0], a[1]), NULL);
  if (!strcmp(op, "chmod"))
    return PROBE_CALL(tag, chmod(a[0], (mode_t)strtol(a[1], NULL, 8)), NULL);
  if (!strcmp(op, "utime")) return op_utime(a[0]);
  if (!strcmp(op, "unlink")) return PROBE_CALL(tag, unlink(a[0]), NULL);
  if (!strcmp(op, "mkdir")) return PROBE_CALL(tag, mkdir(a[0], 0755), NULL);
  if (!strcmp(op, "rmdir")) return PROBE_CALL(tag, rmdir(a[0]), NULL);
  if (!strcmp(op, "link")) return PROBE_CALL(tag, link(a[0], a[1]), NULL);
  if (!strcmp(op, "symlink")) return PROBE_CALL(tag, symlink(a[0], a[1]), NULL);
  if (!strcmp(op, "opath")) return op_opath(a[0]);
  if (!strcmp(op, "readfd")) return op_readfd(a[0]);
  if (!strcmp(op, "procfd")) return op_procfd(a[0]);
  if (!strcmp(op, "exec")) return op_exec(a[0]);
  if (!strcmp(op, "execwith")) return op_execwith(a[0], a[1]);
  return op_fds();
}

int main(int argc, char** argv) {
  if (argc < 2) probe_usage("fsop", "OP ARGS [OP ARGS ...]");
  int failed = 0;
  for (int i = 1; i < argc;) {
    int n = arity(argv[i]);
    if (n < 0 || i + n >= argc) probe_usage("fsop", "unknown op or missing argument");
    snprintf(tag, sizeof tag, "%s%s%s", argv[i], n > 0 ? " " : "", n > 0 ? argv[i + 1] : "");
    failed |= run_op(argv[i], argv + i + 1);
    i += n + 1;
  }
  return failed;
}
