// Starting the keeper's program (keeper_exec.hpp), embedded at build time.
#include "keeper_exec.hpp"

#include <cordon/sdk/embed.hpp>

#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cordon/sdk/owned_fd.hpp>

#include <cerrno>
#include <memory>
#include <string>
#include <vector>

CORDON_EMBED_FILE(cordon_landlock_keeper, CORDON_LANDLOCK_KEEPER_FILE)

namespace cordon::landlock {

namespace {

constexpr unsigned kMfdExec = 0x10U;  // MFD_EXEC (Linux 6.3): executable under vm.memfd_noexec=1
constexpr std::size_t kKeeperStack = 32 * 1024;

// The program in a sealed memfd, opened read-only (a writable descriptor would make execve
// fail with ETXTBSY); made once per process. -errno when it cannot be.
int program_fd() noexcept {
  static const int fd = [] {
    int rw = ::memfd_create("cordon-landlock-keeper", MFD_CLOEXEC | MFD_ALLOW_SEALING | kMfdExec);
    if (rw < 0 && errno == EINVAL)
      rw = ::memfd_create("cordon-landlock-keeper", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (rw < 0) return -errno;
    std::string_view bytes = keeper_program();
    std::size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = ::write(rw, bytes.data() + done, bytes.size() - done);
      if (n <= 0) {
        int err = n < 0 ? errno : EIO;
        ::close(rw);
        return -err;
      }
      done += static_cast<std::size_t>(n);
    }
    ::fcntl(rw, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
    std::string self = "/proc/self/fd/" + std::to_string(rw);
    int ro = ::open(self.c_str(), O_RDONLY | O_CLOEXEC);
    int err = errno;
    ::close(rw);
    return ro >= 0 ? ro : -err;
  }();
  return fd;
}

struct ChildArgs {
  int program = -1;
  int keep[3] = {-1, -1, -1};  // passed on through the execve
  int last_cap = CAP_LAST_CAP;
  char* const* argv = nullptr;
  int failed = 0;  // set by the child (on this shared memory) when it could not execute
};

// The kernel's last capability (it may know more or fewer than these headers).
int last_capability() noexcept {
  int last = 0;
  while (last < 63 && ::prctl(PR_CAPBSET_READ, last + 1, 0, 0, 0) >= 0) ++last;
  return last;
}

// The capabilities a new user namespace gives its first process (all of them, whatever cordon's
// bounding set, which the namespace starts afresh), kept through the execve: the program's uid
// there is not 0 (or not yet mapped), so the execve would otherwise drop them.
// 0, or the errno of what failed.
int keep_capabilities(int last_cap) noexcept {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capget, &header, data) != 0) return errno;
  for (auto& d : data) d.inheritable = d.permitted;
  if (::syscall(SYS_capset, &header, data) != 0) return errno;
  for (int cap = 0; cap <= last_cap; ++cap)
    if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) != 0) return errno;
  return 0;
}

// On cordon's memory, with cordon's thread held: raw calls only, and nothing returns. A
// failure is left in `failed` (no report: cordon then forks a keeper on the same socket).
int child_main(void* p) {
  auto& a = *static_cast<ChildArgs*>(p);
  int mine[4] = {a.program, a.keep[0], a.keep[1], a.keep[2]};
  close_all_but(mine, 4);
  for (int fd : a.keep) ::fcntl(fd, F_SETFD, 0);
  if (int err = keep_capabilities(a.last_cap); err != 0) {
    a.failed = err;
    ::_exit(kKeeperFailed);
  }
  char* const envp[] = {nullptr};
  ::syscall(SYS_execveat, a.program, "", a.argv, envp, AT_EMPTY_PATH);
  a.failed = errno;
  ::_exit(kKeeperFailed);
}

std::string cpu_list(const cpu_set_t* cpus) {
  if (cpus == nullptr) return "-";
  std::string out;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, cpus)) out += (out.empty() ? "" : ",") + std::to_string(cpu);
  return out.empty() ? "-" : out;
}

}  // namespace

std::string_view keeper_program() noexcept { return cordon_landlock_keeper(); }

pid_t exec_keeper(const KeeperLaunch& l, int* pidfd, bool* unusable) noexcept {
  *unusable = true;
  static const int last_cap = last_capability();
  int program = program_fd();
  if (program < 0) return program;
  try {
    std::vector<std::string> args = {"cordon-landlock-keeper",     std::to_string(l.socket),
                                     std::to_string(l.cordon),     std::to_string(l.arena),
                                     std::to_string(l.arena_size), l.network ? "1" : "0",
                                     l.root ? "1" : "0",           cpu_list(l.cpus),
                                     l.uid_map ? l.uid_map : "-",  l.gid_map ? l.gid_map : "-"};
    std::vector<char*> argv;
    for (auto& s : args) argv.push_back(s.data());
    argv.push_back(nullptr);
    ChildArgs child{program, {l.socket, l.cordon, l.arena}, last_cap, argv.data()};
    std::unique_ptr<char[]> stack(new char[kKeeperStack]);
    // Every signal blocked while the child runs on this memory: none of cordon's handlers may
    // run in it, and the program unblocks them itself.
    sigset_t all, old;
    ::sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &old);
    pid_t pid =
        ::clone(child_main, stack.get() + kKeeperStack,
                CLONE_NEWUSER | CLONE_NEWPID | CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD,
                &child, pidfd);
    int err = errno;
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (pid < 0) {
      *unusable = false;  // the namespaces were refused: a fork would be too
      return -err;
    }
    if (child.failed != 0) {  // it has exited (CLONE_VFORK): reaped here
      while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
      }
      ::close(*pidfd);
      *pidfd = -1;
      return -child.failed;
    }
    *unusable = false;
    return pid;
  } catch (const std::bad_alloc&) {
    *unusable = false;
    return -ENOMEM;
  }
}

}  // namespace cordon::landlock
