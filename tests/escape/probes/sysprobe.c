/* sysprobe: attempts system calls a sandbox must deny, one report line each.
 *   sysprobe NAME [NAME ...]
 * Arguments are chosen so that a call which gets past the sandbox fails harmlessly with an
 * argument error (EINVAL, EBADF, EFAULT, ENOENT, ENOTTY) or succeeds without lasting effect,
 * while a seccomp denial shows as EPERM. "control" makes ordinary calls that must keep working.
 * Exit status: 0 when every attempt succeeded. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/keyctl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "probe.h"

#define NOPATH "/nonexistent-cordon-probe"

/* Runs fn in a forked child and reports the errno it exits with (0 = success). */
static long in_child(int (*fn)(void)) {
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) _exit(fn());
  int status = 0;
  waitpid(pid, &status, 0);
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 255;
  if (code == 0) return 0;
  errno = code;
  return -1;
}

static int child_unshare_user(void) { return unshare(CLONE_NEWUSER) == 0 ? 0 : errno; }
static int child_unshare_mnt(void) { return unshare(CLONE_NEWNS) == 0 ? 0 : errno; }

static long do_clone_newuser(void) {
  long pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
  if (pid == 0) _exit(0);
  if (pid > 0) waitpid((pid_t)pid, NULL, 0);
  return pid;
}

static long do_clone3_newuser(void) {
  struct clone_args args;
  memset(&args, 0, sizeof args);
  args.flags = CLONE_NEWUSER;
  args.exit_signal = SIGCHLD;
  long pid = syscall(SYS_clone3, &args, sizeof args);
  if (pid == 0) _exit(0);
  if (pid > 0) waitpid((pid_t)pid, NULL, 0);
  return pid;
}

/* Attaches to a child of our own: allowed on a host without Yama restrictions. */
static long do_ptrace(void) {
  pid_t pid = fork();
  if (pid == 0) {
    pause();
    _exit(0);
  }
  long rc = syscall(SYS_ptrace, 16 /* PTRACE_ATTACH */, pid, 0, 0);
  int err = errno;
  if (rc == 0) waitpid(pid, NULL, __WALL);
  kill(pid, SIGKILL);
  waitpid(pid, NULL, __WALL);
  errno = err;
  return rc;
}

/* Reads a word of our own memory through process_vm_readv. */
static long do_process_vm_readv(void) {
  static volatile long word = 42;
  long copy = 0;
  struct iovec local = {&copy, sizeof copy}, remote = {(void*)&word, sizeof word};
  return syscall(SYS_process_vm_readv, getpid(), &local, 1, &remote, 1, 0);
}

static long do_tty_ioctl(unsigned long request) {
  int p[2];
  if (pipe(p) != 0) return -1;
  char c = 'x';
  long rc = ioctl(p[0], request, &c);
  int err = errno;
  close(p[0]);
  close(p[1]);
  errno = err;
  return rc;
}

/* Ordinary calls a sandboxed program needs; they must succeed. */
static long do_control(void) {
  struct utsname u;
  int p[2];
  if (uname(&u) != 0 || getpid() <= 0 || pipe(p) != 0) return -1;
  int n = 0;
  long rc = ioctl(p[0], FIONREAD, &n);
  close(p[0]);
  close(p[1]);
  return rc;
}

static long attempt(const char* name) {
  if (!strcmp(name, "control")) return do_control();
  if (!strcmp(name, "ptrace")) return do_ptrace();
  if (!strcmp(name, "process_vm_readv")) return do_process_vm_readv();
  if (!strcmp(name, "mount")) return mount("none", NOPATH, "tmpfs", 0, NULL);
  if (!strcmp(name, "umount2")) return umount2(NOPATH, 0x40000000);
  if (!strcmp(name, "pivot_root")) return syscall(SYS_pivot_root, NOPATH, NOPATH);
  if (!strcmp(name, "unshare_user")) return in_child(child_unshare_user);
  if (!strcmp(name, "unshare_mnt")) return in_child(child_unshare_mnt);
  if (!strcmp(name, "clone_newuser")) return do_clone_newuser();
  if (!strcmp(name, "clone3_newuser")) return do_clone3_newuser();
  if (!strcmp(name, "setns")) return setns(-1, 0);
  if (!strcmp(name, "bpf")) return syscall(SYS_bpf, 9999, NULL, 0);
  if (!strcmp(name, "perf_event_open")) return syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0);
  if (!strcmp(name, "userfaultfd")) return syscall(SYS_userfaultfd, 1 /* USER_MODE_ONLY */);
  if (!strcmp(name, "io_uring_setup")) return syscall(SYS_io_uring_setup, 1, NULL);
  if (!strcmp(name, "keyctl")) return syscall(SYS_keyctl, 9999, 0, 0, 0, 0);
  if (!strcmp(name, "add_key"))
    return syscall(SYS_add_key, "cordon-no-such-type", "d", NULL, 0, KEY_SPEC_PROCESS_KEYRING);
  if (!strcmp(name, "kexec_load")) return syscall(SYS_kexec_load, 0, 0, NULL, 0x40000000ul);
  if (!strcmp(name, "init_module")) return syscall(SYS_init_module, NULL, 0, "");
  if (!strcmp(name, "finit_module")) return syscall(SYS_finit_module, -1, "", 0);
  if (!strcmp(name, "delete_module"))
    return syscall(SYS_delete_module, "cordon_no_such_module", O_NONBLOCK);
  if (!strcmp(name, "open_by_handle_at"))
    return syscall(SYS_open_by_handle_at, AT_FDCWD, NULL, O_RDONLY);
  if (!strcmp(name, "tiocsti")) return do_tty_ioctl(TIOCSTI);
  if (!strcmp(name, "tioclinux")) return do_tty_ioctl(TIOCLINUX);
  if (!strcmp(name, "swapon")) return syscall(SYS_swapon, NOPATH, 0);
  if (!strcmp(name, "swapoff")) return syscall(SYS_swapoff, NOPATH);
  if (!strcmp(name, "reboot")) return syscall(SYS_reboot, 0, 0, 0, NULL);
  if (!strcmp(name, "acct")) return syscall(SYS_acct, NOPATH);
  fprintf(stderr, "sysprobe: unknown call '%s'\n", name);
  exit(2);
}

/* Whether a successful call hands back a descriptor that should not be kept open. */
static int returns_fd(const char* name) {
  static const char* fds[] = {"bpf", "perf_event_open", "userfaultfd", "io_uring_setup",
                              "open_by_handle_at"};
  for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
    if (!strcmp(name, fds[i])) return 1;
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2) probe_usage("sysprobe", "NAME [NAME ...]");
  int failed = 0;
  for (int i = 1; i < argc; i++) {
    errno = 0;
    long rc = attempt(argv[i]);
    failed |= probe_result(argv[i], rc, errno, NULL);
    if (rc > 2 && returns_fd(argv[i])) close((int)rc);
  }
  return failed;
}
