// The command's process of a supervised run, forked by the supervisor: the namespaces it
// finishes, its set-up and its execve; raw system calls only (see spawn_child.hpp).
#include "spawn_command.hpp"

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
#include <cordon/sdk/seccomp.hpp>

namespace cordon::detail {

void put_record(int fd, const void* data, std::size_t size) {
  auto* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
}

namespace {

[[noreturn]] void fail(int fd, sdk::ChildStage stage, int error, int item, int status) {
  ExecFailure f{static_cast<std::int32_t>(stage), error, item};
  put_record(fd, &f, sizeof f);
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
  put_record(status_fd, &status, sizeof status);
  _exit(0);
}

}  // namespace

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

}  // namespace cordon::detail
