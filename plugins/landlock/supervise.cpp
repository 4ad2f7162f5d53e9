// Starting and supervising the sandbox.
#include "supervise.hpp"

#include <cordon/sdk/error.hpp>

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <memory>

#include "child_util.hpp"
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
    if (!out.failure) out.failure = r;
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

namespace {

void add_usage(rusage& total, const rusage& more) {
  auto add = [](timeval& a, const timeval& b) {
    a.tv_sec += b.tv_sec;
    a.tv_usec += b.tv_usec;
    if (a.tv_usec >= 1000000) {
      a.tv_sec += 1;
      a.tv_usec -= 1000000;
    }
  };
  add(total.ru_utime, more.ru_utime);
  add(total.ru_stime, more.ru_stime);
  total.ru_maxrss = std::max(total.ru_maxrss, more.ru_maxrss);
}

}  // namespace

Outcome supervise(Started& started, ParentEnds& ends, const std::optional<std::string>& input,
                  const std::shared_ptr<StopToken>& stop,
                  std::optional<std::chrono::steady_clock::time_point> deadline, OutputSink& sink) {
  Outcome out;
  SigpipeGuard guard;
  for (auto* fd : {&ends.out, &ends.err, &ends.report, &ends.input})
    if (*fd) ::fcntl(fd->get(), F_SETFL, ::fcntl(fd->get(), F_GETFL) | O_NONBLOCK);
  std::array<char, 65536> buf;
  std::size_t written = 0;
  bool killed = false, terminated = false;
  int keeper = started.keeper.pidfd.get();
  // Whatever the command left behind dies with the keeper once the command has exited.
  auto kill_sandbox = [&] {
    if (!killed) kill_keeper(started.keeper);
    killed = true;
  };
  int wake = stop ? stop->wake_fd() : -1;
  if (started.pid < 0) {  // no command's process: the entrant's report says why
    out.exited = true;
    out.wait_status = started.entrant_status;
  }
  while (ends.out || ends.err || ends.report || !out.exited) {
    pollfd fds[6] = {
        {ends.out.get(), POLLIN, 0},     {ends.err.get(), POLLIN, 0},
        {ends.report.get(), POLLIN, 0},  {ends.input.get(), POLLOUT, 0},
        {killed ? -1 : wake, POLLIN, 0}, {out.exited ? -1 : started.pidfd.get(), POLLIN, 0}};
    int timeout = poll_timeout(deadline, killed);
    if (stop && !killed && wake < 0)
      timeout = timeout < 0 ? kStopPollMs : std::min(timeout, kStopPollMs);
    int ready = ::poll(fds, 6, timeout);
    if (ready < 0 && errno != EINTR) break;
    if (ready > 0 && fds[4].revents) stop->drain_wake();
    auto now = std::chrono::steady_clock::now();
    if (ready > 0 && fds[2].revents) read_reports(ends.report, out);
    if (ready > 0 && fds[5].revents) {
      rusage usage{};
      if (::wait4(started.pid, &out.wait_status, WNOHANG, &usage) == started.pid) {
        out.exited = true;
        add_usage(out.usage, usage);
        kill_sandbox();
      }
    }
    auto asked = stop ? stop->requested() : StopToken::Level::none;
    // The keeper passes SIGTERM on to every process of the sandbox.
    if (asked != StopToken::Level::none && !terminated) {
      send_signal(keeper, SIGTERM);
      terminated = true;
    }
    if (asked == StopToken::Level::kill && !killed) {
      kill_sandbox();
      out.stopped = true;
    }
    if (deadline && !killed && now >= *deadline) {
      kill_sandbox();
      out.timed_out = true;
    }
    if (ready <= 0) continue;
    if (fds[0].revents) pump(ends.out, Stream::out, sink, buf);
    if (fds[1].revents) pump(ends.err, Stream::err, sink, buf);
    if (fds[3].revents && input) feed(ends.input, *input, written);
  }
  ends.input.reset();
  kill_sandbox();
  if (!out.exited) {
    rusage usage{};
    while (::wait4(started.pid, &out.wait_status, 0, &usage) < 0 && errno == EINTR) {
    }
    out.exited = true;
    add_usage(out.usage, usage);
  }
  started.pid = -1;
  // A command that exited on its own just before the kill was not timed out or stopped.
  if (WIFEXITED(out.wait_status)) out.timed_out = out.stopped = false;
  return out;
}

void reap_keeper(Started& started, Outcome& out) noexcept {
  if (!started.keeper) return;
  send_signal(started.keeper.pidfd.get(), SIGKILL);
  rusage usage{};
  child::spin_until_readable(started.keeper.pidfd.get());  // readable once it has exited
  while (::wait4(started.keeper.pid, nullptr, 0, &usage) < 0 && errno == EINTR) {
  }
  add_usage(out.usage, usage);
  recycle_arena(started.keeper);
  started.keeper = Keeper{};
}

}  // namespace cordon::landlock
