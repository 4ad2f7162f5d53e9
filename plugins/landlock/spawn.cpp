// The sandbox's command process (async-signal-safe code only).
#include "spawn.hpp"

#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cordon/sdk/child.hpp>

#include <cerrno>

#include "child_util.hpp"

namespace cordon::landlock {

namespace {

constexpr int kSetupFailed = 125;
constexpr int kExecFailed = 127;

[[noreturn]] void setup_failed(const ChildSpec& s, const char* mechanism, const char* what,
                               const char* path, int err) noexcept {
  send_report(s.report_fd,
              make_report(ChildReport::Kind::setup_failed, err, mechanism, what, path));
  ::_exit(kSetupFailed);
}

int drop_capabilities() noexcept {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capset, &header, data) != 0) return -errno;
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  return 0;
}

// Joins the v1 groups before anything else (and before the identity change, after which a
// non-root cordon's descriptor would no longer be allowed to move this process).
void join_cgroups(const ChildSpec& s) noexcept {
  for (int fd : s.cgroup_tasks) {
    if (fd < 0) continue;
    ssize_t n;
    do n = ::write(fd, "0", 1);
    while (n < 0 && errno == EINTR);
    if (n != 1) setup_failed(s, "cgroup", "cannot join the sandbox's group", "", errno);
  }
}

void become(const ChildSpec& s) noexcept {
  if (s.drop_groups && child::drop_supplementary_groups() != 0)
    setup_failed(s, "user namespace", "cannot drop supplementary groups", "", errno);
  if (child::set_all_gids(s.gid) != 0)
    setup_failed(s, "user namespace", "cannot become the sandbox's group", "", errno);
  if (child::set_all_uids(s.uid) != 0)
    setup_failed(s, "user namespace", "cannot become the sandbox's user", "", errno);
  // After the identity change, which would clear it; cordon keeps its end of the report pipe
  // open while it lives, so an error on ours means it died before the signal was armed.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  pollfd p{s.report_fd, 0, 0};
  if (::poll(&p, 1, 0) > 0 && (p.revents & POLLERR)) ::_exit(kSetupFailed);
}

// Before the tree is there: a session of its own.
void detach(const ChildSpec& s) noexcept {
  if (::setsid() < 0) setup_failed(s, "pid namespace", "setsid", "", errno);
}

// Waits for the keeper's word (`kind`); a failure of the keeper is passed on as this one's.
void wait_for_keeper(const ChildSpec& s, ChildReport::Kind kind) noexcept {
  if (s.tree_sealed) return;
  ChildReport r;
  ssize_t n;
  do n = ::read(s.keeper_socket, &r, sizeof r);
  while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof r) && r.kind == kind) return;
  if (n != static_cast<ssize_t>(sizeof r) || r.kind != ChildReport::Kind::setup_failed)
    r = make_report(ChildReport::Kind::setup_failed, ECHILD, "mount namespace",
                    "the sandbox's keeper died while building the tree");
  send_report(s.report_fd, r);
  ::_exit(kSetupFailed);
}

// The entrant's part of the namespaces, once it is in the keeper's others: a cgroup namespace
// rooted at the sandbox's group (the keeper's is cordon's), and the mount namespace once the
// new root is its root. (Joined earlier, the keeper's pivot_root could miss this process while
// it joined, and leave it in the host's detached tree.)
void join_tree(const ChildSpec& s) noexcept {
  if (::unshare(CLONE_NEWCGROUP) != 0) setup_failed(s, "cgroup namespace", "unshare", "", errno);
  wait_for_keeper(s, ChildReport::Kind::pivoted);
  if (::setns(s.mnt_ns_fd, CLONE_NEWNS) != 0)
    setup_failed(s, "mount namespace", "cannot join the sandbox's", "", errno);
}

// Waits until cordon has reaped the entrant (its byte on handshake_fd); leaves if cordon closed
// its end instead (it gave up on this sandbox, or died).
void wait_for_reaped_entrant(const ChildSpec& s) noexcept {
  char byte = 0;
  ssize_t n;
  do n = ::read(s.handshake_fd, &byte, 1);
  while (n < 0 && errno == EINTR);
  if (n != 1) ::_exit(kSetupFailed);
}

void enter_tree(const ChildSpec& s) noexcept {
  const char* failed = "";
  if (int err = add_sandbox_rules(s.ruleset_fd, *s.ruleset, &failed); err != 0)
    setup_failed(s, "landlock", "cannot add the rule for", failed, -err);
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
    int failed = sdk::execve_patiently(candidate.c_str(), s.argv, s.envp);
    if (failed == EACCES) {
      denied = candidate.c_str();
    } else if (failed != ENOENT && failed != ENOTDIR) {
      err = failed;
      denied = candidate.c_str();
      break;
    }
  }
  if (denied != nullptr && err == ENOENT) err = EACCES;
  send_report(s.report_fd, make_report(ChildReport::Kind::exec_failed, err, "",
                                       denied != nullptr ? denied : s.argv[0]));
  ::_exit(kExecFailed);
}

int command_main(void* arg) noexcept {
  const auto& s = *static_cast<const ChildSpec*>(arg);
  become(s);
  detach(s);
  setup_stdio(s);
  wait_for_keeper(s, ChildReport::Kind::built);
  enter_tree(s);
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
  if (!s.filter_in_entrant)
    if (int err = load_filter(*s.filter); err != 0) setup_failed(s, "seccomp", "load", "", -err);
  // Blocked paths masked and the host's root gone: only now may the command run, from its
  // workspace (entered only now, so that it cannot hold a directory a mask then hides).
  wait_for_keeper(s, ChildReport::Kind::sealed);
  if (::chdir(s.workspace) != 0)
    setup_failed(s, "mount namespace", "enter the workspace", s.workspace, errno);
  wait_for_reaped_entrant(s);
  exec_command(s);
}

}  // namespace

void run_entrant(const ChildSpec& s) noexcept {
  // Every signal back to its default action: cordon's handlers must never run in a child (they
  // would act on cordon's state), and the command must not inherit an ignored signal.
  sdk::default_signals();
  // Cordon's end of the report pipe: with it gone, a failed write of a report, or become()'s
  // poll, tells that cordon died.
  ::close(s.report_peer_fd);
  join_cgroups(s);
  for (int i = 0; i < s.ns_count; ++i)
    if (::setns(s.ns_fds[i], s.ns_types[i]) != 0)
      setup_failed(s, "namespaces", "cannot join the keeper's namespaces", "", errno);
  join_tree(s);
  if (s.filter_in_entrant)
    if (int err = load_filter(*s.filter); err != 0) setup_failed(s, "seccomp", "load", "", -err);
  // Not CLONE_VFORK: the command's process waits for this one to be reaped, not the other way.
  pid_t pid = ::clone(command_main, s.stack + s.stack_size, CLONE_VM | CLONE_PARENT | SIGCHLD,
                      const_cast<ChildSpec*>(&s));
  if (pid < 0) setup_failed(s, "spawn", "cannot start the command's process", "", errno);
  *s.command_pid = pid;
  ::_exit(0);
}

}  // namespace cordon::landlock
