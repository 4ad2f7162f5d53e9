// The supervisor of a supervised run, after fork(): the namespaces it enters, the command's
// tree it reaps, waits for and kills, and its report; raw system calls only (see
// spawn_child.hpp; the command's own process is in spawn_command.cpp).
#include "spawn_child.hpp"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cordon/sdk/child.hpp>
#include <cordon/sdk/owned_fd.hpp>
#include "spawn_command.hpp"
#include "spawn_guard.hpp"

namespace cordon::detail {

namespace {

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
    put_record(fds.status, &report, sizeof report);
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
    put_record(fds.status, &report, sizeof report);
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
  put_record(fds.status, &report, sizeof report);
  _exit(0);
}

}  // namespace cordon::detail
