// Starting the command's process (launch.hpp).
#include "launch.hpp"

#include <cordon/sdk/error.hpp>

#include <sanitizer/asan_interface.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "keeper_shared.hpp"
#include "namespaces.hpp"

namespace cordon::landlock {

namespace {

constexpr std::size_t kCommandStack = 64 * 1024;

int entrant_entry(void* spec) { run_entrant(*static_cast<const ChildSpec*>(spec)); }

// Every signal blocked on this thread while the sandbox's processes may run on its memory.
struct BlockSignals {
  sigset_t old;
  BlockSignals() {
    sigset_t all;
    ::sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &old);
  }
  ~BlockSignals() { ::pthread_sigmask(SIG_SETMASK, &old, nullptr); }
};

Error spawn_error(const std::string& what, int err) {
  return Error(code::kIsolationFailed, "spawn: " + what + ": " + std::strerror(err),
               "the command did not run");
}

// What the sandbox's processes use of this thread's memory until the command executes: the
// entrant's and the command's stacks, and a page shared with the entrant even when it is forked
// (it writes the command's pid there). Kept for the thread's next run rather than given back:
// an unmapping interrupts every CPU those processes ran on to flush its TLB (~0.2 ms a run).
// A forked child of this process inherits the page as shared memory, so it maps its own.
struct LaunchMemory {
  pid_t* pid = static_cast<pid_t*>(MAP_FAILED);
  pid_t owner = 0;                 // the process `pid` was mapped for
  std::unique_ptr<char[]> stacks;  // not zeroed: a few pages are used
  ~LaunchMemory() {
    if (pid != MAP_FAILED) ::munmap(pid, sizeof(pid_t));
  }
};

LaunchMemory& launch_memory() {
  thread_local LaunchMemory m;
  const pid_t self = ::getpid();
  if (m.pid != MAP_FAILED && m.owner != self) {
    ::munmap(m.pid, sizeof(pid_t));
    m.pid = static_cast<pid_t*>(MAP_FAILED);
  }
  if (m.pid == MAP_FAILED) {
    m.pid = static_cast<pid_t*>(
        ::mmap(nullptr, sizeof(pid_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    if (m.pid == MAP_FAILED) throw spawn_error("cannot map a page", errno);
    m.owner = self;
  }
  if (!m.stacks) m.stacks.reset(new char[2 * kCommandStack]);
  // The last run's processes left their frames' redzones poisoned in AddressSanitizer's shadow
  // of this memory (they ended by execve or _exit, never returning); a no-op otherwise.
  ASAN_UNPOISON_MEMORY_REGION(m.stacks.get(), 2 * kCommandStack);
  return m;
}

// The entrant runs on cordon's memory (CLONE_VM | CLONE_VFORK: no page tables copied, and this
// thread is held until it has exited), except where it must be born in a v2 group, which only
// clone3 does, forked. Its descriptor table is its own either way. Returns its pid or -errno.
pid_t start_entrant(const ChildSpec& spec, int cgroup_fd, char* stack_top) {
  if (cgroup_fd >= 0) {
    int pidfd = -1;
    pid_t pid = clone_sandbox(kCloneClearSighand, cgroup_fd, &pidfd);
    if (pid == 0) run_entrant(spec);
    if (pidfd >= 0) ::close(pidfd);
    return pid;
  }
  pid_t pid = ::clone(entrant_entry, stack_top, CLONE_VM | CLONE_VFORK | SIGCHLD,
                      const_cast<ChildSpec*>(&spec));
  return pid < 0 ? -errno : pid;
}

}  // namespace

// Until the command has executed, its process may run on this memory, this thread's errno
// included: so every signal stays blocked here (no EINTR), nothing below reads errno, and
// nothing of cordon runs but this thread's waits.
Started start_command(ChildSpec& spec, int cgroup_fd, Keeper& keeper) {
  LaunchMemory& memory = launch_memory();
  *memory.pid = 0;
  char* stacks = memory.stacks.get();
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
    throw spawn_error("cannot create a socket pair", errno);
  UniqueFd ours(pair[0]), theirs(pair[1]);
  spec.handshake_fd = theirs.get();
  spec.command_pid = memory.pid;
  spec.stack = stacks;
  spec.stack_size = kCommandStack;
  const int dumpable = ::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
  int status = 0;
  {
    BlockSignals blocked;  // also keeps cordon's handlers out of the entrant until it resets them
    pid_t entrant = start_entrant(spec, cgroup_fd, stacks + 2 * kCommandStack);
    if (entrant < 0) throw spawn_error("cannot start the sandbox's entrant", -entrant);
    theirs.reset();                  // the entrant's copy and the command's are the only ones left
    ::waitpid(entrant, &status, 0);  // no signal can interrupt it
    // Reaped: it no longer counts in the sandbox's pids group or RLIMIT_NPROC.
    char byte = 1;
    [[maybe_unused]] ssize_t n = ::send(ours.get(), &byte, 1, MSG_NOSIGNAL);
    while (::read(ours.get(), &byte, 1) > 0) {
    }  // end of file: the command executed, or its process is gone
  }
  // The identity change of the command's process made the shared memory non-dumpable; it stays
  // so while a keeper shares it (keeper_shared.hpp).
  restore_dumpable(dumpable);
  Started s;
  s.keeper = std::exchange(keeper, Keeper{});
  // Joined (or failed): the namespaces are the keeper's and the sandbox's alone from now on, so
  // the keeper's death tears them down, while cordon tidies up, instead of cordon's last close.
  for (auto& ns : s.keeper.ns) ns.reset();
  s.keeper.socket.reset();
  s.pid = *memory.pid;
  if (s.pid <= 0) {  // the entrant failed: its report says why
    s.pid = -1;
    s.entrant_status = status;
    return s;
  }
  s.pidfd.reset(static_cast<int>(::syscall(SYS_pidfd_open, s.pid, 0)));
  if (!s.pidfd) {
    int err = errno;
    abandon(s);
    throw spawn_error("cannot open the command's pidfd", err);
  }
  return s;
}

// The keeper's death kills every process of its namespace; it cannot finish dying before the
// command's process, cordon's child, is reaped.
void abandon(Started& started) noexcept {
  kill_keeper(started.keeper);
  while (started.pid > 0 && ::waitpid(started.pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  started.pid = -1;
  discard_keeper(started.keeper);
}

}  // namespace cordon::landlock
