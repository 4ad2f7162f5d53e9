// The supervisor and the command, after fork(): raw system calls only (see spawn_child.hpp).
#include "spawn_child.hpp"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cordon/sdk/child.hpp>
#include <cordon/sdk/owned_fd.hpp>
#include <cordon/sdk/seccomp.hpp>
#include "spawn_guard.hpp"

namespace cordon::detail {

namespace {

struct ExecFailure {
  std::int32_t stage;
  std::int32_t error;
  std::int32_t item;
};

void write_all(int fd, const void* data, std::size_t size) {
  auto* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
}

[[noreturn]] void fail(int fd, sdk::ChildStage stage, int error, int item, int status) {
  ExecFailure f{static_cast<std::int32_t>(stage), error, item};
  write_all(fd, &f, sizeof f);
  _exit(status);
}

// Every descriptor from 3 up is closed by execve; the failure pipe stays usable until then.
void cloexec_from_3() {
#ifdef SYS_close_range
  if (::syscall(SYS_close_range, 3u, ~0u, 4u /* CLOSE_RANGE_CLOEXEC */) == 0) return;
#endif
  rlimit rl{};
  rlim_t top = ::getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur : 1024;
  if (top > 65536) top = 65536;
  for (int fd = 3; fd < static_cast<int>(top); ++fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
}

std::size_t length(const char* s) {
  std::size_t n = 0;
  while (s[n]) ++n;
  return n;
}

// Writes all of `text` to the file at `path`; 0 or an errno.
int write_file(const char* path, const char* text) {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  std::size_t size = length(text);
  ssize_t put = ::write(fd, text, size);
  int error = put == static_cast<ssize_t>(size) ? 0 : put < 0 ? errno : EIO;
  ::close(fd);
  return error;
}

// The supervisor's part of ChildSpec::namespaces: every one but the mount namespace, and the
// user namespace's maps. 0 or an errno, with `item` the flag that failed (0: unshare).
int enter_namespaces(const ChildPlan& plan, int& item) {
  item = 0;
  int flags = plan.namespaces & ~CLONE_NEWNS;
  if (flags == 0) return 0;
  if (::unshare(flags) != 0) return errno;
  if (!(flags & CLONE_NEWUSER)) return 0;
  item = CLONE_NEWUSER;
  if (plan.deny_setgroups)
    if (int error = write_file("/proc/self/setgroups", "deny"); error != 0) return error;
  if (int error = write_file("/proc/self/uid_map", plan.uid_map); error != 0) return error;
  return write_file("/proc/self/gid_map", plan.gid_map);
}

// "lo" up in the command's fresh network namespace: 0 or an errno.
int loopback_up() {
  int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return errno;
  ifreq ifr{};
  ifr.ifr_name[0] = 'l';
  ifr.ifr_name[1] = 'o';
  int rc = ::ioctl(s, SIOCGIFFLAGS, &ifr);
  if (rc == 0) {
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP);
    rc = ::ioctl(s, SIOCSIFFLAGS, &ifr);
  }
  int error = rc == 0 ? 0 : errno;
  ::close(s);
  return error;
}

// The command's part of ChildSpec::namespaces, in its own process: the mount namespace with a
// fresh /proc and /dev/mqueue, and loopback. 0 or an errno, with `item` the flag that failed.
int finish_namespaces(const ChildPlan& plan, int& item) {
  constexpr unsigned long kFresh = MS_NOSUID | MS_NODEV | MS_NOEXEC;
  item = CLONE_NEWNS;
  if (plan.namespaces & CLONE_NEWNS) {
    // Private first: nothing mounted here may propagate to the host's mount namespace.
    if (::unshare(CLONE_NEWNS) != 0 || ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr))
      return errno;
    item = CLONE_NEWPID;
    if ((plan.namespaces & CLONE_NEWPID) && ::mount("proc", "/proc", "proc", kFresh, nullptr) != 0)
      return errno;
    item = CLONE_NEWIPC;
    if ((plan.namespaces & CLONE_NEWIPC) &&
        ::mount("mqueue", "/dev/mqueue", "mqueue", kFresh, nullptr) != 0 && errno != ENOENT)
      return errno;
  }
  item = CLONE_NEWNET;
  return (plan.namespaces & CLONE_NEWNET) ? loopback_up() : 0;
}

// The supervisor is alive while it holds the read end of the failure pipe. In a new pid
// namespace getppid() is 0, so a closed read end (POLLERR on the write end) is the test there.
bool supervisor_alive(const ChildPlan& plan, pid_t supervisor, int report_fd) {
  if (!(plan.namespaces & CLONE_NEWPID)) return ::getppid() == supervisor;
  pollfd end{report_fd, POLLOUT, 0};
  return ::poll(&end, 1, 0) == 1 && !(end.revents & (POLLERR | POLLHUP));
}

// Like execvp over precomputed candidates: skip what is missing, remember a permission error.
[[noreturn]] void exec_command(const ChildPlan& plan, int report_fd) {
  int error = ENOENT;
  bool denied = false;
  for (auto* path = plan.exec_paths; *path; ++path) {
    error = sdk::execve_patiently(*path, plan.argv, plan.envp);
    if (error == EACCES) denied = true;
    if (error != EACCES && error != ENOENT && error != ENOTDIR && error != ESTALE &&
        error != ENODEV && error != ETIMEDOUT)
      break;
  }
  if (denied && (error == ENOENT || error == ENOTDIR)) error = EACCES;
  bool missing = error == ENOENT || error == ENOTDIR || error == ENAMETOOLONG;
  fail(report_fd, sdk::ChildStage::exec, error, 0, missing ? 127 : 126);
}

// In a new pid namespace the process made there is its pid 1, which gets no signal it does not
// handle: a command running as pid 1 could not die of its own raise(), nor of a SIGTERM. So it
// stays behind as the namespace's init and forks the command. Its only work: reap, and write
// the command's wait status to `status_fd` before it exits (a pid 1 cannot die of a signal of
// its own choosing to pass the status on). The command's end is the init's, and so the
// namespace's. Returns in the command's process.
void split_off_init(int report_fd, int status_fd) {
  pid_t command = ::fork();
  if (command < 0) fail(report_fd, sdk::ChildStage::fork, errno, 0, 125);
  if (command == 0) {
    ::close(status_fd);
    return;
  }
  // Nothing of the command's stays open here: its output ends when it does, and the
  // supervisor's wait for an exec failure ends at the command's exec.
  for (int fd : {report_fd, 0, 1, 2}) ::close(fd);
  sigset_t all;
  sigfillset(&all);
  ::sigprocmask(SIG_SETMASK, &all, nullptr);
  int status = 0;
  while (true) {
    int st = 0;
    pid_t done = ::waitpid(-1, &st, 0);
    if (done == command) {
      status = st;
      break;
    }
    if (done < 0 && errno != EINTR) break;
  }
  write_all(status_fd, &status, sizeof status);
  _exit(0);
}

[[noreturn]] void become_command(const ChildPlan& plan, const ChildFds& fds, pid_t supervisor,
                                 const GuardFilter* guard, int report_fd, int init_status_fd) {
  ::setpgid(0, 0);
  sdk::default_signals();
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (!supervisor_alive(plan, supervisor, report_fd)) _exit(125);
  ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  if (::dup2(fds.in, 0) < 0 || ::dup2(fds.out, 1) < 0 || ::dup2(fds.err, 2) < 0)
    fail(report_fd, sdk::ChildStage::setup, errno, 0, 125);
  int item = 0;
  if (int error = finish_namespaces(plan, item); error != 0)
    fail(report_fd, sdk::ChildStage::namespaces, error, item, 125);
  if (plan.namespaces & CLONE_NEWPID) split_off_init(report_fd, init_status_fd);
  for (std::size_t i = 0; i < plan.rlimit_count; ++i) {
    rlimit rl{plan.rlimits[i].second, plan.rlimits[i].second};
    if (::setrlimit(plan.rlimits[i].first, &rl) != 0)
      fail(report_fd, sdk::ChildStage::rlimit, errno, plan.rlimits[i].first, 125);
  }
  // Raw system calls: glibc's wrappers would signal threads a forked child does not have.
  // Groups and gid first, while the privilege to change them is still held.
  if (plan.has_user &&
      (::syscall(SYS_setgroups, 0, nullptr) != 0 || ::syscall(SYS_setgid, plan.gid) != 0 ||
       ::syscall(SYS_setuid, plan.uid) != 0))
    fail(report_fd, sdk::ChildStage::user, errno, static_cast<int>(plan.uid), 125);
  if (::chdir(plan.cwd) != 0) fail(report_fd, sdk::ChildStage::chdir, errno, 0, 125);
  if (guard)
    if (int error = install_guard(*guard); error != 0)
      fail(report_fd, sdk::ChildStage::guard, error, 0, 125);
  cloexec_from_3();
  if (plan.filter && !plan.filter->empty())
    if (int error = sdk::try_install_denials(*plan.filter); error != 0)
      fail(report_fd, sdk::ChildStage::filter, error, 0, 125);
  exec_command(plan, report_fd);
}

timespec now() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return t;
}

bool before(const timespec& a, const timespec& b) {
  return a.tv_sec < b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec < b.tv_nsec);
}

timespec minus(const timespec& a, const timespec& b) {
  timespec d{a.tv_sec - b.tv_sec, a.tv_nsec - b.tv_nsec};
  if (d.tv_nsec < 0) d.tv_sec -= 1, d.tv_nsec += 1000000000L;
  return d;
}

timespec plus(const timespec& a, const timespec& b) {
  timespec s{a.tv_sec + b.tv_sec, a.tv_nsec + b.tv_nsec};
  if (s.tv_nsec >= 1000000000L) s.tv_sec += 1, s.tv_nsec -= 1000000000L;
  return s;
}

// Sends `sig` to every child of this (single-threaded) process, as listed by the kernel.
// Returns how many were listed.
int signal_children(int sig) {
  char path[64] = "/proc/self/task/";
  char* p = path + 16;
  char digits[16];
  int n = 0;
  for (long tid = ::syscall(SYS_gettid); tid > 0; tid /= 10) digits[n++] = char('0' + tid % 10);
  while (n > 0) *p++ = digits[--n];
  const char tail[] = "/children";
  for (const char* t = tail; *t;) *p++ = *t++;
  *p = '\0';
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[4096];
  long pid = 0;
  int count = 0;
  for (ssize_t got; (got = ::read(fd, buf, sizeof buf)) > 0;) {
    for (ssize_t i = 0; i < got; ++i) {
      if (buf[i] >= '0' && buf[i] <= '9') {
        pid = pid * 10 + (buf[i] - '0');
      } else if (pid > 0) {
        ::kill(static_cast<pid_t>(pid), sig);
        ++count;
        pid = 0;
      }
    }
  }
  if (pid > 0) ::kill(static_cast<pid_t>(pid), sig), ++count;
  ::close(fd);
  return count;
}

struct Tree {
  pid_t command;
  bool done = false;
  int status = 0;
  int reaped_after = 0;  // descendants reaped once the command had ended
};

// Reaps whatever has exited; returns false when there is no child left at all.
bool reap(Tree& tree) {
  for (;;) {
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid == 0) return true;
    if (pid < 0) return errno == EINTR ? true : false;
    if (pid == tree.command) {
      tree.done = true;
      tree.status = status;
    } else if (tree.done) {
      ++tree.reaped_after;
    }
  }
}

// Waits for the command, a cancelling signal or the deadline (then SIGTERM, grace, give up).
bool wait_command(const ChildPlan& plan, Tree& tree, const sigset_t& wake) {
  bool timed_out = false;
  timespec kill_at{};
  for (;;) {
    reap(tree);
    if (tree.done) return timed_out;
    timespec t = now(), left{};
    bool bounded = timed_out || plan.has_deadline;
    if (timed_out) {
      if (!before(t, kill_at)) return true;
      left = minus(kill_at, t);
    } else if (plan.has_deadline) {
      if (!before(t, plan.deadline)) {
        timed_out = true;
        ::kill(-tree.command, SIGTERM);
        signal_children(SIGTERM);
        kill_at = plus(t, plan.grace);
        continue;
      }
      left = minus(plan.deadline, t);
    }
    siginfo_t info;
    int sig = ::sigtimedwait(&wake, &info, bounded ? &left : nullptr);
    if (sig == kTerminateSignal && info.si_pid == plan.cordon) {
      // cordon asks the command to stop: SIGTERM to it all, and keep waiting for it.
      ::kill(-tree.command, SIGTERM);
      signal_children(SIGTERM);
      continue;
    }
    if (sig > 0 && sig != SIGCHLD && sig != kTerminateSignal)
      return timed_out;  // cordon is gone or cancelled the run
  }
}

// Kills the whole tree: every child of this subreaper, round after round, as orphans of killed
// processes are reparented here, until no child is left.
void kill_tree(Tree& tree, const sigset_t& wake) {
  const timespec tick{0, 10 * 1000 * 1000};
  while (true) {
    signal_children(SIGKILL);
    if (!reap(tree)) return;
    siginfo_t info;
    ::sigtimedwait(&wake, &info, &tick);
  }
}

}  // namespace

void run_supervisor(const ChildPlan& plan, const ChildFds& fds) {
  // Only its own descriptors: a copy of one of cordon's that lived as long as the run would
  // keep a file open that the host may want to execute, or see closed.
  int mine[4] = {fds.in, fds.out, fds.err, fds.status};
  close_all_but(mine, 4);
  sigset_t all, wake;
  sigfillset(&all);
  ::sigprocmask(SIG_SETMASK, &all, nullptr);
  sigemptyset(&wake);
  for (int s : {SIGCHLD, SIGTERM, SIGHUP, SIGINT, SIGQUIT, kTerminateSignal}) sigaddset(&wake, s);
  SupervisorReport report{kReportMagic, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  int failure_pipe[2];
  int init_pipe[2] = {-1, -1};  // with CLONE_NEWPID: the command's wait status, from its init
  pid_t me = ::getpid();
  // The namespaces come first: once not dumpable, this process cannot write its own uid_map.
  int ns_item = 0;
  if (int error = enter_namespaces(plan, ns_item); error != 0) {
    report.stage = static_cast<int>(sdk::ChildStage::namespaces);
    report.error = error;
    report.item = ns_item;
    write_all(fds.status, &report, sizeof report);
    _exit(0);
  }
  // Not dumpable: a process of the same user can neither ptrace this one nor write its memory.
  GuardFilter guard;
  bool ok = ::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0 && ::prctl(PR_SET_PDEATHSIG, SIGTERM) == 0 &&
            ::prctl(PR_SET_DUMPABLE, 0) == 0 && ::getppid() == plan.cordon &&
            (!plan.guard || build_guard(guard, me, ::getpgrp())) &&
            ::pipe2(failure_pipe, O_CLOEXEC) == 0 &&
            (!(plan.namespaces & CLONE_NEWPID) || ::pipe2(init_pipe, O_CLOEXEC) == 0);
  pid_t command = ok ? ::fork() : -1;
  if (command == 0) {
    ::close(failure_pipe[0]);
    if (init_pipe[0] >= 0) ::close(init_pipe[0]);
    become_command(plan, fds, me, plan.guard ? &guard : nullptr, failure_pipe[1], init_pipe[1]);
  }
  if (command < 0) {
    report.stage = static_cast<int>(ok ? sdk::ChildStage::fork : sdk::ChildStage::setup);
    report.error = ok ? errno : EINVAL;
    write_all(fds.status, &report, sizeof report);
    _exit(0);
  }
  ::close(failure_pipe[1]);
  if (init_pipe[1] >= 0) ::close(init_pipe[1]);
  ::close(fds.in);
  ::close(fds.out);
  ::close(fds.err);
  ExecFailure failure{0, 0, 0};
  ssize_t got;
  while ((got = ::read(failure_pipe[0], &failure, sizeof failure)) < 0 && errno == EINTR) {
  }
  ::close(failure_pipe[0]);
  Tree tree{command};
  report.timed_out = wait_command(plan, tree, wake) ? 1 : 0;
  kill_tree(tree, wake);
  rusage ru{};
  ::getrusage(RUSAGE_CHILDREN, &ru);
  report.cpu_user_usec = ru.ru_utime.tv_sec * 1000000LL + ru.ru_utime.tv_usec;
  report.cpu_system_usec = ru.ru_stime.tv_sec * 1000000LL + ru.ru_stime.tv_usec;
  if (got == static_cast<ssize_t>(sizeof failure)) {
    report.stage = failure.stage;
    report.error = failure.error;
    report.item = failure.item;
  }
  int command_status = 0;
  if (tree.done && init_pipe[0] >= 0 &&
      ::read(init_pipe[0], &command_status, sizeof command_status) ==
          static_cast<ssize_t>(sizeof command_status))
    tree.status = command_status;  // the init's own status is not the command's
  report.has_status = tree.done ? 1 : 0;
  report.status = tree.status;
  report.leftovers = tree.reaped_after;
  write_all(fds.status, &report, sizeof report);
  _exit(0);
}

}  // namespace cordon::detail
