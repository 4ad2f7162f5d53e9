// The keeper (pid 1 of the sandbox) and the front end's prestarted one.
#include "keeper.hpp"

#include <cordon/sdk/error.hpp>

#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>

#include "child_util.hpp"
#include "keeper_exec.hpp"
#include "keeper_process.hpp"
#include "keeper_shared.hpp"
#include "namespaces.hpp"

namespace cordon::landlock {

namespace {

ChildReport died_report(const char* mechanism, const char* what) noexcept {
  return make_report(ChildReport::Kind::setup_failed, ECHILD, mechanism, what);
}

// These are constant-initialised: the front end prestarts a keeper from a constructor that may
// run before this file's dynamic initialisation would.

// One arena kept from a reaped keeper for the next: unmapping it would interrupt the other CPUs
// (the command's process ran there on this memory) to flush their TLBs. Defined before g_slot,
// whose destructor recycles one. A fork of the process inherits it as shared memory, which its
// parent may be writing another tree into: only the process that kept it uses it again.
constinit std::mutex g_arena_mutex;
constinit std::unique_ptr<SharedArena> g_spare_arena;
constinit pid_t g_spare_owner = 0;

// A fork made while another thread (the keeper shelf's) holds the lock must not inherit it
// held: the child's own first run would wait forever.
void lock_arenas() noexcept { g_arena_mutex.lock(); }
void unlock_arenas() noexcept { g_arena_mutex.unlock(); }

std::unique_ptr<SharedArena> take_arena() {
  static const int registered = ::pthread_atfork(lock_arenas, unlock_arenas, unlock_arenas);
  (void)registered;
  {
    std::lock_guard lock(g_arena_mutex);
    if (g_spare_arena && g_spare_owner == ::getpid()) {
      g_spare_arena->reset();
      return std::move(g_spare_arena);
    }
    g_spare_arena.reset();  // the parent's: only this process's mapping of it goes
  }
  // Big enough for a tree of thousands of paths; only the pages written are used.
  return std::make_unique<SharedArena>(1 << 20);
}

// The front end's prestarted keeper; one nobody took is discarded at exit.
struct Slot {
  std::mutex mutex;
  Keeper keeper;
  ~Slot() { discard_keeper(keeper); }
};
constinit Slot g_slot;

// Set once the keeper's program could not be executed here: every keeper is forked from then on.
constinit std::atomic<bool> g_exec_unusable{false};

// `all` but the CPU this runs on; false when that leaves none (or the CPU is unknown).
bool other_cpus(const cpu_set_t& all, cpu_set_t& others, int& here) noexcept {
  here = ::sched_getcpu();
  if (here < 0 || here >= CPU_SETSIZE) return false;
  others = all;
  CPU_CLR(here, &others);
  return CPU_COUNT(&others) > 0;
}

// A new child waits on its parent's CPU until the parent blocks, which would be after the
// planning it is meant to overlap: it is sent to the other CPUs cordon may use (if any), and
// restores `all` (cordon's CPUs) itself once it runs. (One the scheduler runs first, at once,
// leaves by itself: keeper_main.)
void move_off_this_cpu(pid_t pid, const cpu_set_t& all) noexcept {
  cpu_set_t others;
  int here = -1;
  if (other_cpus(all, others, here)) ::sched_setaffinity(pid, sizeof others, &others);
}

}  // namespace

void recycle_arena(Keeper& keeper) noexcept {
  std::lock_guard lock(g_arena_mutex);
  if (g_spare_arena && g_spare_owner == ::getpid()) return;
  g_spare_arena = std::move(keeper.arena);
  g_spare_owner = ::getpid();
}

Keeper start_keeper(bool network, KeeperStart how) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
    throw Error(code::kIsolationFailed,
                std::string("cannot create a socket pair: ") + std::strerror(errno));
  Pipe ready{UniqueFd(pair[0]), UniqueFd(pair[1])};
  auto arena = take_arena();
  Identity self;
  self.uid = ::geteuid();
  self.gid = ::getegid();
  std::string uid_map = self.uid_map(), gid_map = self.gid_map();
  bool root = self.uid == 0;
  UniqueFd self_fd(static_cast<int>(::syscall(SYS_pidfd_open, ::getpid(), 0)));
  if (!self_fd)
    throw Error(code::kIsolationFailed,
                std::string("cannot open a pidfd of cordon: ") + std::strerror(errno));
  cpu_set_t cpus;
  bool have_cpus = ::sched_getaffinity(0, sizeof cpus, &cpus) == 0;
  const char* maps[2] = {root ? nullptr : uid_map.c_str(), root ? nullptr : gid_map.c_str()};
  int pidfd = -1;
  pid_t pid = -1;
  if (how == KeeperStart::exec && !g_exec_unusable.load(std::memory_order_relaxed)) {
    KeeperLaunch launch{ready.write.get(), self_fd.get(), arena->fd(),
                        arena->size(),     network,       root,
                        maps[0],           maps[1],       have_cpus ? &cpus : nullptr};
    bool unusable = false;
    pid = exec_keeper(launch, &pidfd, &unusable);
    // Not a weaker sandbox: the same keeper, forked.
    if (unusable) g_exec_unusable.store(true, std::memory_order_relaxed);
    if (unusable) how = KeeperStart::fork;
  } else if (how == KeeperStart::exec) {
    how = KeeperStart::fork;
  }
  if (how == KeeperStart::shared || how == KeeperStart::fork) {
    KeeperArgs args{ready.write.get(),
                    self_fd.get(),
                    network,
                    root,
                    maps[0],
                    maps[1],
                    static_cast<const FlatLayout*>(arena->base()),
                    have_cpus ? &cpus : nullptr};
    int peer = ready.read.get();
    cpu_set_t away;  // in case the child runs first, on this CPU (keeper_main)
    if (have_cpus && other_cpus(cpus, away, args.cordon_cpu)) args.away = &away;
    if (how == KeeperStart::shared) pid = clone_shared_keeper(args, &pidfd);
    if (how == KeeperStart::fork || pid == 0)
      pid = clone_sandbox(CLONE_NEWUSER | CLONE_NEWPID | kCloneClearSighand, -1, &pidfd);
    if (pid == 0) {
      ::close(peer);
      keeper_main(args);
    }
  }
  if (pid < 0) {
    std::string why = userns_restriction();
    throw Error(code::kIsolationFailed,
                "namespaces: cannot create the sandbox: " +
                    (why.empty() ? std::string(std::strerror(-pid)) : why),
                "cordon's landlock backend needs user namespaces");
  }
  if (have_cpus) move_off_this_cpu(pid, cpus);
  Keeper k;
  k.pid = pid;
  k.pidfd.reset(pidfd);
  k.socket = std::move(ready.read);
  k.network = network;
  k.arena = std::move(arena);
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
    keeper.arena->set_peer(static_cast<std::uintptr_t>(r.arena));
    return std::nullopt;
  }
  if (whole && r.kind == ChildReport::Kind::setup_failed) return r;
  return died_report("namespaces", "the sandbox's keeper died while making them");
}

void request_tree(Keeper& keeper, const Layout& layout, const Identity& identity) {
  flatten(layout, identity.uid, identity.gid, *keeper.arena);
  char go = kBuildTree;
  if (::send(keeper.socket.get(), &go, 1, MSG_NOSIGNAL) != 1)
    throw Error(code::kIsolationFailed,
                std::string("cannot reach the sandbox's keeper: ") + std::strerror(errno));
}

void write_keeper_maps(const Keeper& keeper, const Identity& identity) {
  if (!identity.parent_writes_maps) return;
  const std::string uid_map = identity.uid_map(), gid_map = identity.gid_map();
  const char* failed = "";
  if (int e = write_id_maps(keeper.pid, uid_map.c_str(), gid_map.c_str(), false, &failed))
    throw Error(code::kIsolationFailed,
                std::string("user namespace: cannot write ") + failed + ": " + std::strerror(-e));
}

std::optional<ChildReport> await_sealed(Keeper& keeper, int timeout_ms) noexcept {
  for (auto expected :
       {ChildReport::Kind::pivoted, ChildReport::Kind::built, ChildReport::Kind::sealed}) {
    pollfd p{keeper.socket.get(), POLLIN, 0};
    int ready;
    do ready = ::poll(&p, 1, timeout_ms);
    while (ready < 0 && errno == EINTR);
    ChildReport r;
    ssize_t n = ready == 1 ? ::recv(keeper.socket.get(), &r, sizeof r, 0) : -1;
    if (n == static_cast<ssize_t>(sizeof r) && r.kind == expected) continue;
    if (n == static_cast<ssize_t>(sizeof r) && r.kind == ChildReport::Kind::setup_failed) return r;
    return died_report("mount namespace", "the sandbox's keeper did not build the tree");
  }
  return std::nullopt;
}

void kill_keeper(const Keeper& keeper) noexcept {
  if (!keeper) return;
  // Woken by the signal, it would die on this CPU, after whatever cordon does next.
  cpu_set_t cpus;
  if (::sched_getaffinity(0, sizeof cpus, &cpus) == 0) move_off_this_cpu(keeper.pid, cpus);
  ::syscall(SYS_pidfd_send_signal, keeper.pidfd.get(), SIGKILL, nullptr, 0);
}

void discard_keeper(Keeper& keeper) noexcept {
  if (!keeper) return;
  kill_keeper(keeper);
  while (::waitpid(keeper.pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  recycle_arena(keeper);
  keeper = Keeper{};
}

void prestart_keeper() noexcept {
  std::lock_guard lock(g_slot.mutex);
  if (g_slot.keeper) return;
  try {
    g_slot.keeper = start_keeper(true, KeeperStart::shared);
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
