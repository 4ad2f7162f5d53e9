// The floor of a namespaced sandbox on this machine, as issue #4 defines it: a small static C
// program that creates the user, pid, network, mount, ipc, uts and cgroup namespaces, mounts a
// fresh /proc, confines itself with Landlock (reads and execution under /, nothing else) and a
// seccomp filter, and executes /bin/true as the namespace's pid 1. No policy, no cgroup limits,
// no private /tmp, HOME or /dev, no output capture and no error reporting beyond an exit code:
// everything here is also on cordon's path, so cordon cannot start a sandbox faster than this.
//   cordon-bench-floor   exit 0 when /bin/true ran, 1-5 for the step that failed
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int go[2];
static char stack[64 * 1024];

static int write_file(const char* path, const char* text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = write(fd, text, strlen(text));
  close(fd);
  return n == (ssize_t)strlen(text) ? 0 : -1;
}

static int confine_with_landlock(void) {
  const __u64 read_exec =
      LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
  struct landlock_ruleset_attr attr = {.handled_access_fs =
                                           read_exec | LANDLOCK_ACCESS_FS_WRITE_FILE};
  int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
  int root = open("/", O_PATH | O_CLOEXEC);
  struct landlock_path_beneath_attr rule = {.allowed_access = read_exec, .parent_fd = root};
  if (ruleset < 0 || root < 0 ||
      syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0)
    return -1;
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
  return (int)syscall(SYS_landlock_restrict_self, ruleset, 0);
}

static int filter_syscalls(void) {
  struct sock_filter program[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ptrace, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 1),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_keyctl, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {.len = sizeof program / sizeof program[0], .filter = program};
  return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

static int sandbox(void* unused) {
  (void)unused;
  char byte;
  close(go[1]);
  if (read(go[0], &byte, 1) != 1) _exit(2);
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
      mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
    _exit(3);
  if (confine_with_landlock() != 0) _exit(4);
  if (filter_syscalls() != 0) _exit(5);
  char* argv[] = {"/bin/true", NULL};
  execv(argv[0], argv);
  _exit(127);
}

int main(void) {
  if (pipe2(go, O_CLOEXEC) != 0) return 1;
  int flags = CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWIPC |
              CLONE_NEWUTS | CLONE_NEWCGROUP;
  pid_t pid = clone(sandbox, stack + sizeof stack, flags | SIGCHLD, NULL);
  if (pid < 0) return 1;
  char path[64], map[64];
  snprintf(map, sizeof map, "0 %u 1\n", (unsigned)getuid());
  snprintf(path, sizeof path, "/proc/%d/uid_map", pid);
  int failed = write_file(path, map);
  snprintf(path, sizeof path, "/proc/%d/setgroups", pid);
  failed |= write_file(path, "deny");
  snprintf(map, sizeof map, "0 %u 1\n", (unsigned)getgid());
  snprintf(path, sizeof path, "/proc/%d/gid_map", pid);
  failed |= write_file(path, map);
  if (failed || write(go[1], "x", 1) != 1) kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
