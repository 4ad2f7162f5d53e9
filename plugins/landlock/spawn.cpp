// The sandbox's init and command (async-signal-safe code only).
#include "spawn.hpp"

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "child_util.hpp"
#include "idmap.hpp"
#include "namespaces.hpp"

namespace cordon::landlock {

namespace {

constexpr int kSetupFailed = 125;
constexpr int kExecFailed = 127;

void send(int fd, const ChildReport& r) noexcept {
  ssize_t n;
  do n = ::write(fd, &r, sizeof r);
  while (n < 0 && errno == EINTR);
}

[[noreturn]] void setup_failed(const ChildSpec& s, const char* mechanism, const char* what,
                               const char* path, int err) noexcept {
  ChildReport r;
  r.kind = ChildReport::Kind::setup_failed;
  r.err = err;
  child::copy(r.mechanism, sizeof r.mechanism, mechanism);
  child::copy(r.detail, sizeof r.detail, what);
  if (path && *path) {
    child::append(r.detail, sizeof r.detail, " '");
    child::append(r.detail, sizeof r.detail, path);
    child::append(r.detail, sizeof r.detail, "'");
  }
  send(s.report_fd, r);
  ::_exit(kSetupFailed);
}

void reset_signals() noexcept;

int drop_capabilities() noexcept {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capset, &header, data) != 0) return -errno;
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  return 0;
}

void wait_for_cordon(const ChildSpec& s) noexcept {
  char go = 0;
  if (::read(s.go_fd, &go, 1) != 1) ::_exit(kSetupFailed);  // cordon went away
}

// Joins the v1 groups before anything else (and before the identity change, after which a
// non-root cordon's descriptor would no longer be allowed to move this process).
void join_cgroups(const ChildSpec& s) noexcept {
  for (int i = 0; i < s.cgroup_task_count; ++i) {
    if (s.cgroup_tasks[i] < 0) continue;
    ssize_t n;
    do n = ::write(s.cgroup_tasks[i], "0", 1);
    while (n < 0 && errno == EINTR);
    if (n != 1) setup_failed(s, "cgroup", "cannot join the sandbox's group", "", errno);
  }
}

void become(const ChildSpec& s) noexcept {
  if (s.wait_for_maps) wait_for_cordon(s);
  if (s.self_maps) {
    const char* failed = "";
    if (int err = write_id_maps(0, s.uid_map, s.gid_map, true, &failed); err != 0)
      setup_failed(s, "user namespace", "cannot write", failed, -err);
  }
  if (s.drop_groups && child::drop_supplementary_groups() != 0)
    setup_failed(s, "user namespace", "cannot drop supplementary groups", "", errno);
  if (child::set_all_gids(s.gid) != 0)
    setup_failed(s, "user namespace", "cannot become the sandbox's group", "", errno);
  if (child::set_all_uids(s.uid) != 0)
    setup_failed(s, "user namespace", "cannot become the sandbox's user", "", errno);
  // After the identity change, which would clear it; cordon keeps the go pipe open while it
  // lives, so a hang-up here means it died before the signal was armed.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  pollfd p{s.go_fd, POLLIN, 0};
  if (::poll(&p, 1, 0) > 0 && (p.revents & POLLHUP)) ::_exit(kSetupFailed);
}

void isolate(const ChildSpec& s) noexcept {
  if (::sethostname("cordon", 6) != 0) setup_failed(s, "uts namespace", "sethostname", "", errno);
  if (s.loopback)
    if (int err = bring_up_loopback(); err != 0)
      setup_failed(s, "network namespace", "cannot bring up", "lo", -err);
  MountFailure mf;
  if (!clone_sources(*s.layout, s.trees, mf) || !build_root(*s.layout, s.trees, mf))
    setup_failed(s, "mount namespace", mf.step, mf.path, mf.err);
  const char* failed = "";
  if (int err = add_sandbox_rules(s.ruleset_fd, *s.ruleset, &failed); err != 0)
    setup_failed(s, "landlock", "cannot add the rule for", failed, -err);
  if (::setsid() < 0) setup_failed(s, "pid namespace", "setsid", "", errno);
  if (s.unshare_cgroup && ::unshare(CLONE_NEWCGROUP) != 0)
    setup_failed(s, "cgroup namespace", "unshare", "", errno);
}

void reset_signals() noexcept {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

void setup_stdio(const ChildSpec& s) noexcept {
  // Lift the three descriptors above 2 first, so that dup2 cannot overwrite one of them.
  int in = ::fcntl(s.stdin_fd, F_DUPFD_CLOEXEC, 3);
  int out = ::fcntl(s.stdout_fd, F_DUPFD_CLOEXEC, 3);
  int err = ::fcntl(s.stderr_fd, F_DUPFD_CLOEXEC, 3);
  if (in < 0 || out < 0 || err < 0 || ::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0)
    setup_failed(s, "spawn", "cannot set up stdin/stdout/stderr", "", errno);
}

[[noreturn]] void exec_command(const ChildSpec& s) noexcept {
  int err = ENOENT;
  const char* denied = nullptr;
  for (const auto& candidate : *s.candidates) {
    ::execve(candidate.c_str(), s.argv, s.envp);
    if (errno == EACCES) {
      denied = candidate.c_str();
    } else if (errno != ENOENT && errno != ENOTDIR) {
      err = errno;
      denied = candidate.c_str();
      break;
    }
  }
  if (denied != nullptr && err == ENOENT) err = EACCES;
  ChildReport r;
  r.kind = ChildReport::Kind::exec_failed;
  r.err = err;
  child::copy(r.detail, sizeof r.detail, denied != nullptr ? denied : s.argv[0]);
  send(s.report_fd, r);
  ::_exit(kExecFailed);
}

// The command, in a vfork-style child of the init: limits, no_new_privs, Landlock, no
// capabilities, no inherited descriptors, seccomp last, then exec.
int command_main(void* arg) noexcept {
  const auto& s = *static_cast<const ChildSpec*>(arg);
  setup_stdio(s);
  // Signal dispositions and mask: the init reset them all before it cloned this process.
  std::size_t failed_limit = 0;
  if (int err = apply_rlimits(*s.rlimits, &failed_limit); err != 0)
    setup_failed(s, "limits", "setrlimit", "", -err);
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    setup_failed(s, "no_new_privs", "prctl", "", errno);
  if (int err = restrict_self(s.ruleset_fd); err != 0)
    setup_failed(s, "landlock", "landlock_restrict_self", "", -err);
  if (int err = drop_capabilities(); err != 0) setup_failed(s, "capabilities", "capset", "", -err);
  if (::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0)
    setup_failed(s, "spawn", "close_range", "", errno);
  if (int err = load_filter(*s.filter); err != 0) setup_failed(s, "seccomp", "load", "", -err);
  exec_command(s);
}

volatile sig_atomic_t g_stop = 0;

void on_stop(int) { g_stop = 1; }
// A graceful stop (`cordon job stop`): every process of the sandbox gets SIGTERM.
void on_terminate(int) { ::kill(-1, SIGTERM); }

// Waits for the command, or for cordon's stop request (the deadline); returns its status.
int wait_for(pid_t command) noexcept {
  for (;;) {
    int st = 0;
    pid_t pid = ::waitpid(-1, &st, 0);
    if (pid == command) return st;
    if (g_stop) return -1;
    if (pid < 0 && errno != EINTR) return -1;
  }
}

}  // namespace

void run_init(const ChildSpec& s) noexcept {
  reset_signals();  // cordon's handlers must never run in here
  join_cgroups(s);
  become(s);
  isolate(s);
  pid_t command = ::clone(command_main, s.stack + s.stack_size, CLONE_VM | CLONE_VFORK | SIGCHLD,
                          const_cast<ChildSpec*>(&s));
  if (command < 0) setup_failed(s, "spawn", "cannot start the command", "", errno);
  // The init keeps only the report pipe, no capabilities, and cannot be inspected.
  if (s.report_fd > 0) ::close_range(0, static_cast<unsigned>(s.report_fd - 1), 0);
  ::close_range(static_cast<unsigned>(s.report_fd + 1), ~0U, 0);
  drop_capabilities();
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  struct sigaction stop {};
  stop.sa_handler = on_stop;  // no SA_RESTART: waitpid returns with EINTR
  ::sigaction(kStopSignal, &stop, nullptr);
  struct sigaction term {};
  term.sa_handler = on_terminate;
  term.sa_flags = SA_RESTART;
  ::sigaction(SIGTERM, &term, nullptr);
  // Until now a SIGTERM would have been dropped (an init without a handler ignores it) or sent
  // to no one: cordon holds a graceful stop back until it reads this.
  ChildReport started;
  started.kind = ChildReport::Kind::started;
  send(s.report_fd, started);
  int status = wait_for(command);
  // Everything left dies now and is reaped here, so that its CPU time is counted; the
  // kernel would kill it anyway when the init exits, but without accounting.
  ::kill(-1, SIGKILL);
  while (::waitpid(-1, nullptr, 0) > 0 || errno == EINTR) {
  }
  if (status != -1) {
    ChildReport r;
    r.kind = ChildReport::Kind::exited;
    r.status = status;
    send(s.report_fd, r);
  }
  ::_exit(0);
}

std::vector<std::string> exec_candidates(const std::string& argv0, const std::string& search) {
  if (argv0.find('/') != std::string::npos) return {argv0};
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= search.size()) {
    auto end = search.find(':', start);
    if (end == std::string::npos) end = search.size();
    std::string dir = search.substr(start, end - start);
    if (dir.empty()) dir = ".";
    out.push_back(dir + "/" + argv0);
    start = end + 1;
  }
  return out;
}

}  // namespace cordon::landlock
