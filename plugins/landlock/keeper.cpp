// The keeper (pid 1 of the sandbox) and the front end's prestarted one.
#include "keeper.hpp"

#include <cordon/error.hpp>

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

#include <cerrno>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>

#include "child_util.hpp"
#include "idmap.hpp"
#include "namespaces.hpp"

namespace cordon::landlock {

namespace {

constexpr int kKeeperFailed = 125;

void report(int fd, ChildReport::Kind kind, const char* mechanism, const char* what,
            int err) noexcept {
  ChildReport r;
  r.kind = kind;
  r.err = err;
  child::copy(r.mechanism, sizeof r.mechanism, mechanism);
  child::copy(r.detail, sizeof r.detail, what);
  ssize_t n;
  do n = ::write(fd, &r, sizeof r);
  while (n < 0 && errno == EINTR);
}

[[noreturn]] void keeper_failed(int fd, const char* mechanism, const char* what) noexcept {
  report(fd, ChildReport::Kind::setup_failed, mechanism, what, errno);
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

// The namespaces sent to cordon, in the order they are joined: the user namespace first, for
// the capabilities the others need.
struct NamespaceFile {
  const char* path;
  int type;
};
constexpr NamespaceFile kNamespaceFiles[kKeeperNamespaces] = {
    {"/proc/self/ns/user", CLONE_NEWUSER}, {"/proc/self/ns/pid", CLONE_NEWPID},
    {"/proc/self/ns/mnt", CLONE_NEWNS},    {"/proc/self/ns/ipc", CLONE_NEWIPC},
    {"/proc/self/ns/uts", CLONE_NEWUTS},   {"/proc/self/ns/net", CLONE_NEWNET}};

int namespace_count(bool network) noexcept { return network ? 6 : 5; }

// The good report, with the namespaces' descriptors attached.
int send_namespaces(int socket, bool network) noexcept {
  int fds[kKeeperNamespaces];
  int n = namespace_count(network);
  for (int i = 0; i < n; ++i) {
    fds[i] = ::open(kNamespaceFiles[i].path, O_RDONLY | O_CLOEXEC);
    if (fds[i] < 0) return -1;
  }
  ChildReport r;
  r.kind = ChildReport::Kind::started;
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

// What the keeper's process needs, prepared before the clone.
struct KeeperArgs {
  int ready = -1;  ///< the keeper's end of the socket
  int peer = -1;   ///< cordon's end of it
  bool network = false;
  const char* uid_map = nullptr;  ///< set when cordon is not root: the maps it may write
  const char* gid_map = nullptr;
};

[[noreturn]] void keeper_main(const KeeperArgs& a) noexcept {
  int ready = a.ready;
  bool network = a.network;
  child::reset_signals();  // cordon's handlers must never run in here
  ::close(a.peer);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  // Cordon may have died before the signal was armed: then its end of the socket is closed.
  pollfd p{ready, 0, 0};
  if (::poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR))) ::_exit(kKeeperFailed);
  // An unprivileged cordon can map only itself, which is the sandbox's identity; the namespace
  // is made by its creator, so the maps are written here (root's are written by cordon, once it
  // knows whom the sandbox runs as).
  const char* failed = "";
  if (a.uid_map != nullptr)
    if (int err = write_id_maps(0, a.uid_map, a.gid_map, true, &failed); err != 0) {
      errno = -err;
      keeper_failed(ready, "user namespace", failed);
    }
  // Its working directory would otherwise pin a host directory; "/" follows the pivot_root.
  if (::chdir("/") != 0) keeper_failed(ready, "mount namespace", "chdir /");
  if (::unshare(keeper_namespaces(network)) != 0)
    keeper_failed(ready, network ? "network namespace" : "mount namespace",
                  "cannot create the mount, IPC, UTS and network namespaces");
  if (::sethostname("cordon", 6) != 0) keeper_failed(ready, "uts namespace", "sethostname");
  if (network)
    if (int err = bring_up_loopback(); err != 0) {
      errno = -err;
      keeper_failed(ready, "network namespace", "cannot bring up 'lo'");
    }
  if (keep_only_kill() != 0) keeper_failed(ready, "capabilities", "capset");
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  install(SIGCHLD, on_child);
  install(SIGTERM, on_terminate);
  if (send_namespaces(ready, network) != 0)
    keeper_failed(ready, "namespaces", "cannot send them to cordon");
  ::close_range(0, ~0U, 0);  // the socket too: nothing of cordon's stays open in here
  reap_forever();
}

// The front end's prestarted keeper; one nobody took is discarded at exit.
struct Slot {
  std::mutex mutex;
  Keeper keeper;
  ~Slot() { discard_keeper(keeper); }
};
Slot g_slot;

// A new child waits on its parent's CPU until the parent blocks, which would be after the
// planning it is meant to overlap: it is sent to the other CPUs cordon may use (if any).
void move_off_this_cpu(pid_t pid) noexcept {
  int cpu = ::sched_getcpu();
  cpu_set_t mask;
  if (cpu < 0 || cpu >= CPU_SETSIZE || ::sched_getaffinity(0, sizeof mask, &mask) != 0) return;
  CPU_CLR(cpu, &mask);
  if (CPU_COUNT(&mask) > 0) ::sched_setaffinity(pid, sizeof mask, &mask);
}

}  // namespace

int keeper_namespaces(bool network) noexcept {
  return CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | (network ? CLONE_NEWNET : 0);
}

Keeper start_keeper(bool network) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
    throw Error(code::kIsolationFailed,
                std::string("cannot create a socket pair: ") + std::strerror(errno));
  Pipe ready{UniqueFd(pair[0]), UniqueFd(pair[1])};
  Identity self;
  self.uid = ::geteuid();
  self.gid = ::getegid();
  std::string uid_map = self.uid_map(), gid_map = self.gid_map();
  bool root = self.uid == 0;
  KeeperArgs args{ready.write.get(), ready.read.get(), network, root ? nullptr : uid_map.c_str(),
                  root ? nullptr : gid_map.c_str()};
  int pidfd = -1;
  pid_t pid = clone_sandbox(CLONE_NEWUSER | CLONE_NEWPID, -1, &pidfd);
  if (pid == 0) keeper_main(args);
  if (pid < 0) {
    std::string why = userns_restriction();
    throw Error(code::kIsolationFailed,
                "namespaces: cannot create the sandbox: " +
                    (why.empty() ? std::string(std::strerror(-pid)) : why),
                "cordon's landlock backend needs user namespaces");
  }
  move_off_this_cpu(pid);
  Keeper k;
  k.pid = pid;
  k.pidfd.reset(pidfd);
  k.socket = std::move(ready.read);
  k.network = network;
  return k;
}

std::optional<ChildReport> await_keeper(Keeper& keeper) noexcept {
  if (keeper.awaited) return std::nullopt;
  ChildReport r;
  iovec iov{&r, sizeof r};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kKeeperNamespaces)] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n;
  do n = ::recvmsg(keeper.socket.get(), &msg, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  keeper.socket.reset();
  int received = 0;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    int count = static_cast<int>((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
    for (int i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      if (received < kKeeperNamespaces) {
        keeper.ns[received].reset(fd);
        keeper.ns_types[received] = kNamespaceFiles[received].type;
        ++received;
      } else {
        ::close(fd);
      }
    }
  }
  keeper.ns_count = received;
  bool whole = n == static_cast<ssize_t>(sizeof r) && !(msg.msg_flags & (MSG_CTRUNC | MSG_TRUNC));
  if (whole && r.kind == ChildReport::Kind::started &&
      received == namespace_count(keeper.network)) {
    keeper.awaited = true;
    return std::nullopt;
  }
  if (whole && r.kind == ChildReport::Kind::setup_failed) return r;
  ChildReport died;
  died.err = ECHILD;
  child::copy(died.mechanism, sizeof died.mechanism, "namespaces");
  child::copy(died.detail, sizeof died.detail, "the sandbox's keeper died while making them");
  return died;
}

void discard_keeper(Keeper& keeper) noexcept {
  if (!keeper) return;
  ::syscall(SYS_pidfd_send_signal, keeper.pidfd.get(), SIGKILL, nullptr, 0);
  while (::waitpid(keeper.pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  keeper = Keeper{};
}

void prestart_keeper() noexcept {
  std::lock_guard lock(g_slot.mutex);
  if (g_slot.keeper) return;
  try {
    g_slot.keeper = start_keeper(true);
  } catch (...) {
    g_slot.keeper = Keeper{};
  }
}

Keeper take_prestarted_keeper(bool network) noexcept {
  std::lock_guard lock(g_slot.mutex);
  Keeper k = std::exchange(g_slot.keeper, Keeper{});
  if (k && k.network != network) discard_keeper(k);
  return k;
}

void discard_prestarted_keeper() noexcept {
  std::lock_guard lock(g_slot.mutex);
  discard_keeper(g_slot.keeper);
}

}  // namespace cordon::landlock
