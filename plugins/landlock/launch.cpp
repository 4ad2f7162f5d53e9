// Starting the command's process (launch.hpp).
#include "launch.hpp"

#include <cordon/sdk/error.hpp>

#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "namespaces.hpp"

namespace cordon::landlock {

namespace {

constexpr std::size_t kStack = 64 * 1024;

int entrant_entry(void* spec) { run_entrant(*static_cast<const ChildSpec*>(spec)); }

// A page shared with the entrant even when it does not share cordon's memory.
struct SharedPid {
  pid_t* pid = static_cast<pid_t*>(
      ::mmap(nullptr, sizeof(pid_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ~SharedPid() {
    if (pid != MAP_FAILED) ::munmap(pid, sizeof(pid_t));
  }
};

Error spawn_error(const std::string& what, int err) {
  return Error(code::kIsolationFailed, "spawn: " + what + ": " + std::strerror(err),
               "the command did not run");
}

// The entrant with memory of its own: to be cloned into a v2 cgroup, or to leave before the
// command's process runs (counts_entrant).
pid_t fork_entrant(const ChildSpec& spec, int cgroup_fd) {
  int pidfd = -1;
  pid_t pid = clone_sandbox(0, cgroup_fd, &pidfd);
  if (pid == 0) run_entrant(spec);
  if (pidfd >= 0) ::close(pidfd);
  return pid;
}

}  // namespace

struct Launch::Resources {
  SharedPid shared;
  std::unique_ptr<char[]> command_stack{new char[kStack]};  // not zeroed: a few pages are used
  std::unique_ptr<char[]> entrant_stack;
  Pipe reaped;   ///< counts_entrant: written once the entrant is reaped
  Pipe proceed;  ///< the early entrant's go-ahead
};

// The early entrant shares cordon's memory (no page tables copied, no page copied on write)
// and its descriptor table, so that what cordon makes after it started (the ruleset, ...) is
// there when it clones the command's process. Signals stay blocked until it has reset their
// handlers, which would otherwise run on cordon's memory. It runs only code that allocates
// nothing and keeps errno untouched but on failure, after which it reports and leaves.
Launch::Launch(ChildSpec& spec, int cgroup_fd, bool counts_entrant)
    : spec_(spec), cgroup_fd_(cgroup_fd), r_(std::make_unique<Resources>()) {
  if (r_->shared.pid == MAP_FAILED) throw spawn_error("cannot map a page", errno);
  *r_->shared.pid = 0;
  spec_.command_pid = r_->shared.pid;
  spec_.stack = r_->command_stack.get();
  spec_.stack_size = kStack;
  if (counts_entrant) {
    r_->reaped = make_pipe();
    spec_.reaped_fd = r_->reaped.read.get();
  }
  if (cgroup_fd >= 0 || counts_entrant) return;  // forked in start()
  r_->proceed = make_pipe();
  spec_.proceed_fd = r_->proceed.read.get();
  spec_.cordon_pid = ::getpid();
  r_->entrant_stack.reset(new char[kStack]);
  dumpable_ = ::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
  sigset_t all, old;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t pid = ::clone(entrant_entry, r_->entrant_stack.get() + kStack,
                      CLONE_VM | CLONE_FILES | SIGCHLD, &spec_);
  int err = errno;
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (pid < 0) throw spawn_error("cannot start the sandbox's entrant", err);
  entrant_ = pid;
  early_ = true;
}

Launch::~Launch() {
  if (entrant_ <= 0) return;
  ::kill(entrant_, SIGKILL);  // it runs on this memory: gone before the memory is
  while (::waitpid(entrant_, nullptr, 0) < 0 && errno == EINTR) {
  }
}

Started Launch::start(Keeper keeper) {
  int status = 0;
  pid_t entrant = std::exchange(entrant_, -1);
  if (early_) {
    // The command's process, cloned next, shares this memory until it executes.
    char go = 1;
    [[maybe_unused]] ssize_t n = ::write(r_->proceed.write.get(), &go, 1);  // or it has failed
  } else {
    entrant = fork_entrant(spec_, cgroup_fd_);
    if (entrant < 0) {
      discard_keeper(keeper);
      throw spawn_error("cannot start the sandbox's entrant", -entrant);
    }
  }
  while (::waitpid(entrant, &status, 0) < 0 && errno == EINTR) {
  }
  // The identity change of the command's process made the shared memory non-dumpable; it has
  // executed (or failed) by now.
  if (early_ && dumpable_ >= 0) ::prctl(PR_SET_DUMPABLE, dumpable_, 0, 0, 0);
  if (r_->reaped.write) {
    char byte = 1;
    [[maybe_unused]] ssize_t n = ::write(r_->reaped.write.get(), &byte, 1);
  }
  Started s;
  s.keeper = std::move(keeper);
  // Joined (or failed): the namespaces are the keeper's and the sandbox's alone from now on, so
  // the keeper's death tears them down, while cordon tidies up, instead of cordon's last close.
  for (auto& ns : s.keeper.ns) ns.reset();
  s.keeper.socket.reset();
  s.pid = *r_->shared.pid;
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
