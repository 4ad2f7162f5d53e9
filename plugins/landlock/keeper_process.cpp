// The keeper's process: namespaces, the tree, then reaping until it is killed.
#include "keeper_process.hpp"

#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cordon/sdk/owned_fd.hpp>

#include <cerrno>
#include <cstring>

#include "child_util.hpp"
#include "keeper_exec.hpp"
#include "mounts.hpp"

namespace cordon::landlock {

namespace {

[[noreturn]] void keeper_failed(int fd, const char* mechanism, const char* what) noexcept {
  send_report(fd, make_report(ChildReport::Kind::setup_failed, errno, mechanism, what));
  ::_exit(kKeeperFailed);
}

// Only CAP_KILL stays (in the sandbox's user namespace): the sandbox runs as another uid when
// cordon is root, and a SIGTERM must still reach it.
int keep_only_kill() noexcept {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  data[0].effective = data[0].permitted = 1U << CAP_KILL;
  return static_cast<int>(::syscall(SYS_capset, &header, data));
}

void on_child(int) {}
// A graceful stop (`cordon job stop`): every process of the sandbox gets SIGTERM.
void on_terminate(int) { ::kill(-1, SIGTERM); }

void install(int sig, void (*handler)(int)) noexcept {
  struct sigaction sa {};
  sa.sa_handler = handler;
  sa.sa_flags = SA_RESTART;
  ::sigaction(sig, &sa, nullptr);
}

// Reaps whatever is reparented to it, until cordon kills it.
[[noreturn]] void reap_forever() noexcept {
  sigset_t chld, none;
  ::sigemptyset(&chld);
  ::sigaddset(&chld, SIGCHLD);
  ::sigemptyset(&none);
  ::sigprocmask(SIG_BLOCK, &chld, nullptr);
  for (;;) {
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    ::sigsuspend(&none);
  }
}

// The good report, with the namespaces' descriptors attached.
int send_namespaces(int socket, bool network, const FlatLayout* arena) noexcept {
  int fds[kKeeperNamespaces] = {};
  int n = namespace_count(network);
  for (int i = 0; i < n; ++i) {
    fds[i] = ::open(kNamespaceFiles[i].path, O_RDONLY | O_CLOEXEC);
    if (fds[i] < 0) return -1;
  }
  ChildReport r;
  r.kind = ChildReport::Kind::started;
  r.arena = reinterpret_cast<std::uintptr_t>(arena);
  iovec iov{&r, sizeof r};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof fds)] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = CMSG_SPACE(sizeof(int) * static_cast<std::size_t>(n));
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int) * static_cast<std::size_t>(n));
  std::memcpy(CMSG_DATA(c), fds, sizeof(int) * static_cast<std::size_t>(n));
  ssize_t sent;
  do sent = ::sendmsg(socket, &msg, MSG_NOSIGNAL);
  while (sent < 0 && errno == EINTR);
  return sent == static_cast<ssize_t>(sizeof r) ? 0 : -1;
}

// Arms the parent-death signal, which every change of the file-system ids clears; cordon may
// have died before it was armed.
void die_with_cordon(const KeeperArgs& a) noexcept {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  pollfd p{a.cordon, POLLIN, 0};
  if (::poll(&p, 1, 0) != 0) ::_exit(kKeeperFailed);
}

// The namespaces, made while cordon plans the run.
void make_namespaces(const KeeperArgs& a) noexcept {
  int socket = a.socket;
  // An unprivileged cordon can map only itself, which is the sandbox's identity; the namespace
  // is made by its creator, so the maps are written here (root's are written by cordon, once
  // it knows whom the sandbox runs as).
  const char* failed = "";
  if (a.uid_map != nullptr)
    if (int err = write_id_maps(0, a.uid_map, a.gid_map, true, &failed); err != 0) {
      errno = -err;
      keeper_failed(socket, "user namespace", failed);
    }
  // Its working directory would otherwise pin a host directory; "/" follows the pivot_root.
  if (::chdir("/") != 0) keeper_failed(socket, "mount namespace", "chdir /");
  if (::unshare(keeper_namespaces(a.network)) != 0)
    keeper_failed(socket, a.network ? "network namespace" : "mount namespace",
                  "cannot create the mount, IPC, UTS and network namespaces");
  if (::sethostname("cordon", 6) != 0) keeper_failed(socket, "uts namespace", "sethostname");
  if (a.network)
    if (int err = bring_up_loopback(); err != 0) {
      errno = -err;
      keeper_failed(socket, "network namespace", "cannot bring up 'lo'");
    }
  MountFailure mf;
  if (!make_private(mf)) {
    errno = mf.err;
    keeper_failed(socket, "mount namespace", mf.step);
  }
}

[[noreturn]] void mount_failed(int socket, const MountFailure& mf) noexcept {
  send_report(socket, make_report(ChildReport::Kind::setup_failed, mf.err, "mount namespace",
                                  mf.step, mf.path));
  ::_exit(kKeeperFailed);
}

// The tree, once cordon has planned it (and, as root, written the maps it needs).
void build_tree(const KeeperArgs& a) noexcept {
  int socket = a.socket;
  char go = 0;
  ssize_t n;
  do n = ::read(socket, &go, 1);
  while (n < 0 && errno == EINTR);
  if (n != 1 || go != kBuildTree) ::_exit(kKeeperFailed);  // cordon gave up on this sandbox
  const FlatLayout& layout = *a.layout;
  if (a.root && child::drop_supplementary_groups() != 0)
    keeper_failed(socket, "user namespace", "cannot drop supplementary groups");
  // The files made for the tree are the sandbox's; the capabilities to mount stay.
  ::syscall(SYS_setfsgid, layout.gid);
  ::syscall(SYS_setfsuid, layout.uid);
  if (::syscall(SYS_setfsgid, -1) != static_cast<long>(layout.gid) ||
      ::syscall(SYS_setfsuid, -1) != static_cast<long>(layout.uid)) {
    errno = EPERM;
    keeper_failed(socket, "user namespace", "cannot take the sandbox's file-system ids");
  }
  MountFailure mf;
  if (!clone_sources(layout, mf) || !enter_root(layout, mf)) mount_failed(socket, mf);
  // The entrant joins the mount namespace now, and loads the seccomp filter meanwhile.
  send_report(socket, make_report(ChildReport::Kind::pivoted, 0, "", ""));
  if (!build_root(layout, mf)) mount_failed(socket, mf);
  send_report(socket, make_report(ChildReport::Kind::built, 0, "", ""));
  // The command's process confines itself meanwhile, and waits for this before it executes.
  if (!seal_root(layout, mf)) mount_failed(socket, mf);
  send_report(socket, make_report(ChildReport::Kind::sealed, 0, "", ""));
}

}  // namespace

void keeper_main(const KeeperArgs& a) noexcept {
  // The scheduler may run a new child at once on its parent's CPU: it would then hold cordon
  // up for its whole set-up (~1.5 ms), cordon not yet having sent it away (move_off_this_cpu).
  if (a.away != nullptr && ::sched_getcpu() == a.cordon_cpu)
    ::sched_setaffinity(0, sizeof(cpu_set_t), a.away);
  // A forked keeper has all of cordon's descriptors: only its two are kept.
  int mine[2] = {a.socket, a.cordon};
  close_all_but(mine, 2);
  // Cordon sent it to another CPU to start there; from now on it may use any of cordon's.
  if (a.cpus != nullptr) ::sched_setaffinity(0, sizeof(cpu_set_t), a.cpus);
  // The execve reset cordon's handlers; a signal cordon ignores stays ignored, which changes
  // nothing for a pid 1 that takes only SIGCHLD and SIGTERM.
  child::unblock_signals();
  die_with_cordon(a);
  make_namespaces(a);
  // Nothing of cordon's memory may be read through /proc/1 once the command runs.
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  install(SIGCHLD, on_child);
  install(SIGTERM, on_terminate);
  if (send_namespaces(a.socket, a.network, a.layout) != 0)
    keeper_failed(a.socket, "namespaces", "cannot send them to cordon");
  build_tree(a);
  die_with_cordon(a);
  if (keep_only_kill() != 0) ::_exit(kKeeperFailed);  // cordon sees the socket close
  ::close_range(0, ~0U, 0);  // the socket too: nothing of cordon's stays open in here
  reap_forever();
}

}  // namespace cordon::landlock
