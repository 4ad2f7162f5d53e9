// Starting a job's supervisor, detached; finding cordon; the invoking user's home.
#include "job_spawn.hpp"

#include <fcntl.h>
#include <linux/close_range.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cordon/load_hook.hpp>
#include <cordon/sdk/error.hpp>
#include <cordon/sdk/state_roots.hpp>
#include <cordon/user_db.hpp>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "job_files.hpp"
#include "job_spec.hpp"

namespace cordon::detail {

namespace fs = std::filesystem;

namespace {

// In the forked child only async-signal-safe calls: setsid, fork, open, dup2, write, exec.
[[noreturn]] void become_supervisor(const char* exe, char* const argv[], int report, int spec) {
  ::setsid();
  pid_t grandchild = ::fork();
  if (grandchild != 0) ::_exit(grandchild < 0 ? 1 : 0);
  int null = ::open("/dev/null", O_RDWR);
  if (null >= 0) ::dup2(null, 0), ::dup2(null, 1), ::dup2(null, 2);
  ::syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC);
  if (::dup2(spec, kSpecFd) < 0) ::_exit(127);  // the one descriptor exec keeps
  // A stop may come before the supervisor waits for it: keep it pending across exec (the
  // signal mask survives exec; the supervisor's watcher takes it with sigwait).
  sigset_t stops;
  ::sigemptyset(&stops);
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGUSR1}) ::sigaddset(&stops, sig);
  ::sigprocmask(SIG_BLOCK, &stops, nullptr);
  pid_t me = ::getpid();
  (void)!::write(report, &me, sizeof me);
  ::execv(exe, argv);
  int err = errno;
  (void)!::write(report, &err, sizeof err);
  ::_exit(127);
}

bool read_exact(int fd, void* buf, std::size_t n) {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r, n -= static_cast<std::size_t>(r);
  }
  return true;
}

}  // namespace

SupervisorId spawn_supervisor(const fs::path& exe, const fs::path& dir, int spec_fd) {
  std::string exe_s = exe.string(), dir_s = dir.string();
  // Above the descriptors the child replaces (0-2 and kSpecFd itself).
  OwnedFd spec(::fcntl(spec_fd, F_DUPFD_CLOEXEC, kSpecFd + 1));
  if (!spec)
    throw Error(code::kJobStart,
                std::string("cannot start a job supervisor: ") + std::strerror(errno));
  std::vector<char*> argv = {exe_s.data(), const_cast<char*>("job"), const_cast<char*>("supervise"),
                             dir_s.data(), nullptr};
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw Error(code::kJobStart,
                std::string("cannot start a job supervisor: ") + std::strerror(errno));
  pid_t child = ::fork();
  if (child == 0) become_supervisor(exe_s.c_str(), argv.data(), fds[1], spec.get());
  ::close(fds[1]);
  int status = 0;
  if (child > 0) ::waitpid(child, &status, 0);
  pid_t pid = 0;
  int exec_errno = 0;
  bool got_pid = read_exact(fds[0], &pid, sizeof pid);
  bool exec_failed = got_pid && read_exact(fds[0], &exec_errno, sizeof exec_errno);
  ::close(fds[0]);
  if (child < 0 || !got_pid)
    throw Error(code::kJobStart, "cannot start a job supervisor: fork failed");
  if (exec_failed)
    throw Error(code::kJobStart,
                "cannot start the job supervisor '" + exe_s + "': " + std::strerror(exec_errno),
                "install cordon, or point the job manager at the cordon executable");
  return {pid, process_start_ticks(pid), child};
}

fs::path default_cordon_exe() {
  std::error_code ec;
  auto self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && self.filename() == "cordon") return self;
  if (auto lib = code_file(reinterpret_cast<const void*>(&default_cordon_exe)); !lib.empty()) {
    auto lib_dir = lib.parent_path();
    for (auto candidate :
         {lib_dir / ".." / "bin" / "cordon", lib_dir / ".." / ".." / "bin" / "cordon"})
      if (::access(candidate.c_str(), X_OK) == 0) return fs::weakly_canonical(candidate);
  }
  return "cordon";
}

fs::path invoking_home() {
  if (auto h = env_dir("HOME"); !h.empty()) return h;
  if (auto user = find_user(::getuid()); user && !user->home.empty()) return user->home;
  return "/";
}

}  // namespace cordon::detail
