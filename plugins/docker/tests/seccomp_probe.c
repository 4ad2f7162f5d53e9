/* seccomp_probe: makes the system calls cordon's seccomp profile denies, and their allowed
 * neighbours, and prints one line each: "NAME ok" or "NAME ERRNO-NAME". Built static; the tests
 * copy it into the workspace and run it in a container.
 *
 * Arguments are chosen so that a call that gets past seccomp either succeeds without lasting
 * effect or fails with an errno seccomp does not give (ENOTTY for a terminal ioctl on a pipe,
 * EPERM from the kernel for AF_PACKET without CAP_NET_RAW): the expected errno tells cordon's
 * profile apart from the daemon's default. Calls that would change the probe itself run in a
 * child. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void report(const char* name, long rc, int err) {
  const char* what = rc < 0 ? strerrorname_np(err) : "ok";
  printf("%s %s\n", name, what ? what : "unknown-errno");
}

/* Makes `call`, then reports it: errno is read only after the call. */
#define TRY(name, call)       \
  do {                        \
    long rc_ = (long)(call);  \
    report(name, rc_, errno); \
  } while (0)

/* Runs fn in a child; the child exits with 0 or the errno of its call. */
static void in_child(const char* name, int (*fn)(void)) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) _exit(fn());
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
    report(name, -1, pid < 0 ? errno : EIO);
    return;
  }
  report(name, WEXITSTATUS(status) ? -1 : 0, WEXITSTATUS(status));
}

static int child_traceme(void) { return syscall(SYS_ptrace, 0 /* TRACEME */, 0, 0, 0) ? errno : 0; }
static int child_unshare(void) { return unshare(CLONE_NEWUSER) ? errno : 0; }
static int child_norandom(void) { return personality(ADDR_NO_RANDOMIZE) < 0 ? errno : 0; }
static int child_exit(void) { return 0; }

/* clone with `flags`; the child exits at once. */
static void try_clone(const char* name, unsigned long flags) {
  long pid = syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
  if (pid == 0) _exit(0);
  int err = errno;
  if (pid > 0) waitpid((pid_t)pid, NULL, 0);
  report(name, pid, err);
}

static void try_clone3(void) {
  struct clone_args args;
  memset(&args, 0, sizeof args);
  args.exit_signal = SIGCHLD;
  long pid = syscall(SYS_clone3, &args, sizeof args);
  if (pid == 0) _exit(0);
  int err = errno;
  if (pid > 0) waitpid((pid_t)pid, NULL, 0);
  report("clone3", pid, err);
}

static void try_socket(const char* name, int family, int type, int protocol) {
  int fd = socket(family, type, protocol);
  int err = errno;
  report(name, fd, err);
  if (fd >= 0) close(fd);
}

static void try_ioctl(const char* name, int fd, unsigned long request, void* arg) {
  TRY(name, syscall(SYS_ioctl, fd, request, arg));
}

static void denied(int fd) {
  in_child("ptrace", child_traceme);
  TRY("mount", mount("none", "/tmp", "tmpfs", 0, NULL));
  in_child("unshare", child_unshare);
  try_clone("clone_newuser", CLONE_NEWUSER);
  try_clone3();
  TRY("keyctl", syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0));
  TRY("bpf", syscall(SYS_bpf, -1, NULL, 0));
  struct io_uring_params params;
  memset(&params, 0, sizeof params);
  long ring = syscall(SYS_io_uring_setup, 1, &params);
  report("io_uring_setup", ring, errno);
  if (ring >= 0) close((int)ring);
  char c = 'x';
  try_ioctl("ioctl_tiocsti", fd, TIOCSTI, &c);
  /* The kernel reads the request as 32 bits: high bits must not get it past the profile. */
  try_ioctl("ioctl_tiocsti_high", fd, 0x100000000ul | TIOCSTI, &c);
  try_ioctl("ioctl_tioclinux", fd, TIOCLINUX, &c);
  try_socket("socket_packet", AF_PACKET, SOCK_RAW, 0);
  try_socket("socket_vsock", AF_VSOCK, SOCK_STREAM, 0);
  in_child("personality_norandom", child_norandom);
}

static void allowed(int fd) {
  TRY("getpid", getpid());
  in_child("fork", child_exit);
  try_clone("clone", 0);
  int n = 0;
  try_ioctl("ioctl_fionread", fd, FIONREAD, &n);
  struct winsize ws;
  try_ioctl("ioctl_tiocgwinsz", fd, TIOCGWINSZ, &ws);
  try_socket("socket_unix", AF_UNIX, SOCK_STREAM, 0);
  try_socket("socket_inet", AF_INET, SOCK_STREAM, 0);
  try_socket("socket_netlink", AF_NETLINK, SOCK_RAW, 0);
  TRY("personality_query", personality(0xffffffff));
}

int main(void) {
  int pipefd[2];
  if (pipe(pipefd) != 0) return 2;
  setvbuf(stdout, NULL, _IOLBF, 0);
  denied(pipefd[0]);
  allowed(pipefd[0]);
  return 0;
}
