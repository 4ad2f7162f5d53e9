// Starting and supervising the sandbox.
#include "supervise.hpp"

#include <cordon/error.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "namespaces.hpp"

namespace cordon::landlock {

Pipe make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw Error(code::kIsolationFailed,
                std::string("cannot create a pipe: ") + std::strerror(errno));
  Pipe p{UniqueFd(fds[0]), UniqueFd(fds[1])};
  // Keep clear of 0-2, so that the child's dup2 onto them can never clobber one.
  for (auto* end : {&p.read, &p.write})
    if (end->get() < 3) end->reset(::fcntl(end->get(), F_DUPFD_CLOEXEC, 3));
  return p;
}

namespace {

// glibc 2.36's <sys/pidfd.h> lacks C linkage for C++, so the call is made directly.
int send_signal(int pidfd, int sig) {
  return static_cast<int>(::syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0));
}

void kill_and_reap(pid_t pid, int pidfd) {
  if (pidfd >= 0)
    send_signal(pidfd, SIGKILL);
  else
    ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

// Blocks SIGPIPE for this thread while it writes to the command's stdin, and swallows any
// pending one afterwards, so a command that stops reading cannot kill cordon.
class SigpipeGuard {
 public:
  SigpipeGuard() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set, &old_);
  }
  ~SigpipeGuard() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    timespec zero{0, 0};
    while (sigtimedwait(&set, nullptr, &zero) > 0) {
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;

 private:
  sigset_t old_;
};

constexpr std::chrono::milliseconds kStopGrace{250};
// How often a stop request is looked at when its token has no wake-up descriptor.
constexpr int kStopPollMs = 20;

int poll_timeout(std::optional<std::chrono::steady_clock::time_point> deadline, bool killed) {
  if (!deadline || killed) return -1;
  auto left =
      std::chrono::ceil<std::chrono::milliseconds>(*deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::max<long long>(0, std::min<long long>(left.count(), 60000)));
}

// Reads what is there; returns false at end of stream.
bool pump(UniqueFd& fd, Stream stream, OutputSink& sink, std::array<char, 65536>& buf) {
  for (;;) {
    ssize_t n = ::read(fd.get(), buf.data(), buf.size());
    if (n > 0) {
      sink.write(stream, std::string_view(buf.data(), static_cast<std::size_t>(n)));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return true;
    fd.reset();
    return false;
  }
}

void read_reports(UniqueFd& fd, Outcome& out) {
  for (;;) {
    ChildReport r;
    ssize_t n = ::read(fd.get(), &r, sizeof r);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    if (n != static_cast<ssize_t>(sizeof r)) {
      fd.reset();
      return;
    }
    if (r.kind == ChildReport::Kind::started) {
      out.started = true;
    } else if (r.kind == ChildReport::Kind::exited) {
      out.exited = true;
      out.wait_status = r.status;
    } else if (!out.failure) {
      out.failure = r;
    }
  }
}

void feed(UniqueFd& fd, const std::string& input, std::size_t& written) {
  while (written < input.size()) {
    ssize_t n = ::write(fd.get(), input.data() + written, input.size() - written);
    if (n > 0) {
      written += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    break;  // EPIPE: the command stopped reading
  }
  fd.reset();
}

}  // namespace

Started start_sandbox(const ChildSpec& spec, std::uint64_t flags, int cgroup_fd, int go_write,
                      const std::function<void(pid_t)>& write_maps) {
  Started s;
  int pidfd = -1;
  pid_t pid = clone_sandbox(flags, cgroup_fd, &pidfd);
  if (pid == 0) run_init(spec);
  if (pid < 0) {
    std::string why = userns_restriction();
    throw Error(code::kIsolationFailed,
                "namespaces: cannot create the sandbox: " +
                    (why.empty() ? std::string(std::strerror(-pid)) : why),
                "cordon's landlock backend needs user namespaces");
  }
  s.pid = pid;
  s.pidfd.reset(pidfd);
  auto step = [&](bool wanted, const std::function<void(pid_t)>& action) {
    if (!wanted) return;
    try {
      action(pid);
    } catch (...) {
      kill_and_reap(pid, s.pidfd.get());
      throw;
    }
    char go = 1;
    if (::write(go_write, &go, 1) != 1) {
      kill_and_reap(pid, s.pidfd.get());
      throw Error(code::kIsolationFailed, "cannot start the sandbox's init");
    }
  };
  step(spec.wait_for_maps, write_maps);
  return s;
}

void abandon(Started& started) noexcept { kill_and_reap(started.pid, started.pidfd.get()); }

Outcome supervise(Started& started, ParentEnds& ends, const std::optional<std::string>& input,
                  const std::shared_ptr<StopToken>& stop,
                  std::optional<std::chrono::steady_clock::time_point> deadline, OutputSink& sink) {
  Outcome out;
  SigpipeGuard guard;
  for (auto* fd : {&ends.out, &ends.err, &ends.report, &ends.input})
    if (*fd) ::fcntl(fd->get(), F_SETFL, ::fcntl(fd->get(), F_GETFL) | O_NONBLOCK);
  std::array<char, 65536> buf;
  std::size_t written = 0;
  bool stopping = false, killed = false, terminated = false;
  int wake = stop ? stop->wake_fd() : -1;
  while (ends.out || ends.err || ends.report) {
    pollfd fds[5] = {{ends.out.get(), POLLIN, 0},
                     {ends.err.get(), POLLIN, 0},
                     {ends.report.get(), POLLIN, 0},
                     {ends.input.get(), POLLOUT, 0},
                     {killed ? -1 : wake, POLLIN, 0}};
    int timeout = poll_timeout(deadline, killed);
    if (stop && !killed && wake < 0)
      timeout = timeout < 0 ? kStopPollMs : std::min(timeout, kStopPollMs);
    int ready = ::poll(fds, 5, timeout);
    if (ready < 0 && errno != EINTR) break;
    if (ready > 0 && fds[4].revents) stop->drain_wake();
    auto now = std::chrono::steady_clock::now();
    if (ready > 0 && fds[2].revents) read_reports(ends.report, out);
    auto asked = stop ? stop->requested() : StopToken::Level::none;
    // The init passes SIGTERM to every process once it has the command; one sent earlier
    // would be lost, so a request made during the set-up waits for the init's word.
    if (asked != StopToken::Level::none && !terminated && out.started) {
      send_signal(started.pidfd.get(), SIGTERM);
      terminated = true;
    }
    // The init kills and reaps the tree (so its CPU time is counted); SIGKILL follows if it has
    // not finished within the grace period. Until it reports the command's start it has no
    // handler, and the signal would be dropped: then it dies at once.
    auto stop_tree = [&] {
      send_signal(started.pidfd.get(), out.started ? kStopSignal : SIGKILL);
      stopping = true;
      killed = !out.started;
      deadline = now + kStopGrace;
    };
    if (asked == StopToken::Level::kill && !stopping) {
      stop_tree();
      out.stopped = true;
    }
    if (deadline && !stopping && now >= *deadline) {
      stop_tree();
      out.timed_out = true;
    } else if (stopping && !killed && now >= *deadline) {
      send_signal(started.pidfd.get(), SIGKILL);
      killed = true;
    }
    if (ready <= 0) continue;
    if (fds[0].revents) pump(ends.out, Stream::out, sink, buf);
    if (fds[1].revents) pump(ends.err, Stream::err, sink, buf);
    if (fds[3].revents && input) feed(ends.input, *input, written);
  }
  ends.input.reset();
  int status = 0;
  while (::wait4(started.pid, &status, 0, &out.usage) < 0 && errno == EINTR) {
  }
  out.init_status = status;
  // A command that exited on its own just before the deadline was not timed out.
  if (out.timed_out && out.exited) out.timed_out = false;
  if (out.stopped && out.exited) out.stopped = false;
  return out;
}

}  // namespace cordon::landlock
