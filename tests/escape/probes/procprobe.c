/* procprobe: what a sandboxed process can see of and do to other processes and IPC objects.
 *   procprobe scan HEX         count processes whose command line contains the marker HEX
 *                              encodes (hex, so that the sandbox's own command lines, which
 *                              carry cordon's argv, do not contain the marker itself)
 *   procprobe kill0 PID        kill(PID, 0)
 *   procprobe kill9 PID        kill(PID, SIGKILL)
 *   procprobe ptrace PID       PTRACE_ATTACH to PID
 *   procprobe mem PID          open /proc/PID/mem ("self": its own), which takes the right
 *                              to trace PID; read-only, so that Landlock's write rules on
 *                              /proc are not what refuses it
 *   procprobe maps PID         read /proc/PID/maps (where PID's memory lies)
 *   procprobe vmread PID       process_vm_readv one byte of PID's stack
 *   procprobe own MARKER       fork a child (argv holds MARKER), then scan, kill0, kill9 it
 *   procprobe shmget KEY       open an existing SysV shared memory segment by key
 *   procprobe shmnew           create (and remove) a private SysV shared memory segment
 * Exit status: 0 when every attempt succeeded. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/shm.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "probe.h"

static char tag[256];

/* Whether /proc/<pid>/cmdline contains `marker` (arguments are NUL-separated). */
static int cmdline_has(const char* pid, const char* marker) {
  char path[64], buf[4096];
  snprintf(path, sizeof path, "/proc/%s/cmdline", pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  size_t mlen = strlen(marker);
  for (ssize_t i = 0; i + (ssize_t)mlen <= n; i++)
    if (memcmp(buf + i, marker, mlen) == 0) return 1;
  return 0;
}

/* Reports how many processes carry `marker` and how many processes are visible at all. */
static int op_scan(const char* marker) {
  DIR* d = opendir("/proc");
  if (d == NULL) return probe_result(tag, -1, errno, "(at opendir /proc)");
  int found = 0, total = 0;
  struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    total++;
    if (atoi(e->d_name) != getpid() && cmdline_has(e->d_name, marker)) found++;
  }
  closedir(d);
  probe_ok(tag, "found=%d visible=%d", found, total);
  return 0;
}

/* Decodes a hex string ("6162" -> "ab") into a static buffer. */
static const char* unhex(const char* hex) {
  static char out[512];
  size_t n = strlen(hex) / 2;
  if (n >= sizeof out) n = sizeof out - 1;
  for (size_t i = 0; i < n; i++) {
    unsigned v = 0;
    sscanf(hex + 2 * i, "%2x", &v);
    out[i] = (char)v;
  }
  out[n] = 0;
  return out;
}

/* The allowed side: a child of the sandbox itself is visible, signalable and killable. */
static int op_own(const char* marker) {
  pid_t pid = fork();
  if (pid == 0) {
    pause();
    _exit(0);
  }
  char name[32];
  snprintf(name, sizeof name, "%d", pid);
  int seen = cmdline_has(name, marker);
  int alive = kill(pid, 0);
  int killed = kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!seen || alive != 0 || killed != 0 || !WIFSIGNALED(status))
    return probe_result(tag, -1, errno, "(own child not visible or not killable)");
  probe_ok(tag, "child %d seen, signalled, killed by %d", pid, WTERMSIG(status));
  return 0;
}

static int op_ptrace(pid_t pid) {
  long rc = ptrace(PTRACE_ATTACH, pid, 0, 0);
  int err = errno;
  if (rc == 0) ptrace(PTRACE_DETACH, pid, 0, 0);
  return probe_result(tag, rc, err, NULL);
}

/* "self" or a number, as /proc names it. */
static const char* proc_name(const char* a) { return strcmp(a, "self") == 0 ? "self" : a; }

static int op_mem(const char* a) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%s/mem", proc_name(a));
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  int err = errno;
  if (fd >= 0) close(fd);
  return probe_result(tag, fd, err, NULL);
}

static int op_maps(const char* a) {
  char path[64], buf[256];
  snprintf(path, sizeof path, "/proc/%s/maps", proc_name(a));
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return probe_result(tag, -1, errno, "(open)");
  ssize_t n = read(fd, buf, sizeof buf);
  int err = errno;
  close(fd);
  if (n == 0) return probe_result(tag, -1, ENODATA, "(empty)");
  return probe_result(tag, n, err, "(read)");
}

static int op_vmread(const char* a) {
  pid_t pid = strcmp(a, "self") == 0 ? getpid() : atoi(a);
  char here = 0, there = 1;
  struct iovec local = {&there, 1}, remote = {&here, 1};
  return PROBE_CALL(tag, process_vm_readv(pid, &local, 1, &remote, 1, 0), NULL);
}

static int op_shmnew(void) {
  int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
  if (id < 0) return probe_result(tag, -1, errno, NULL);
  shmctl(id, IPC_RMID, NULL);
  probe_ok(tag, "created and removed %d", id);
  return 0;
}

int main(int argc, char** argv) {
  int failed = 0;
  for (int i = 1; i < argc;) {
    const char* op = argv[i];
    int n = strcmp(op, "shmnew") == 0 ? 0 : 1;
    if (i + n >= argc) probe_usage("procprobe", "OP [ARG] ... (see the source)");
    const char* a = n ? argv[i + 1] : "";
    snprintf(tag, sizeof tag, "%s%s%s", op, n ? " " : "", a);
    if (!strcmp(op, "scan"))
      failed |= op_scan(unhex(a));
    else if (!strcmp(op, "kill0"))
      failed |= PROBE_CALL(tag, kill(atoi(a), 0), NULL);
    else if (!strcmp(op, "kill9"))
      failed |= PROBE_CALL(tag, kill(atoi(a), SIGKILL), NULL);
    else if (!strcmp(op, "ptrace"))
      failed |= op_ptrace(atoi(a));
    else if (!strcmp(op, "mem"))
      failed |= op_mem(a);
    else if (!strcmp(op, "maps"))
      failed |= op_maps(a);
    else if (!strcmp(op, "vmread"))
      failed |= op_vmread(a);
    else if (!strcmp(op, "own"))
      failed |= op_own(a);
    else if (!strcmp(op, "shmget"))
      failed |= PROBE_CALL(tag, shmget((key_t)strtol(a, NULL, 0), 0, 0), NULL);
    else if (!strcmp(op, "shmnew"))
      failed |= op_shmnew();
    else
      probe_usage("procprobe", "unknown op");
    i += n + 1;
  }
  return failed;
}
