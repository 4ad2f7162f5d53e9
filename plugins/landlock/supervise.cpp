// Starting and supervising the sandbox.
#include "supervise.hpp"

#include <cordon/sdk/error.hpp>
#include <cordon/sdk/pump.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "child_util.hpp"

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
  bool killed = false;
  // Whatever the command left behind dies with the keeper once the command has exited.
  auto kill_sandbox = [&] {
    if (!killed) kill_keeper(started.keeper);
    killed = true;
  };
  if (started.pid < 0) {  // no command's process: the entrant's report says why
    out.exited = true;
    out.wait_status = started.entrant_status;
  }
  sdk::Pump pump(sink);
  pump.output(Stream::out, ends.out.get());
  pump.output(Stream::err, ends.err.get());
  if (ends.input) pump.input(ends.input.release(), input.value_or(""));
  if (ends.report) {
    ::fcntl(ends.report.get(), F_SETFL, ::fcntl(ends.report.get(), F_GETFL) | O_NONBLOCK);
    pump.watch(ends.report.get(), [&] {
      read_reports(ends.report, out);
      return static_cast<bool>(ends.report);
    });
  }
  if (!out.exited)
    pump.watch(started.pidfd.get(), [&] {
      rusage usage{};
      pid_t reaped = ::wait4(started.pid, &out.wait_status, WNOHANG, &usage);
      // Reaped by another (SIGCHLD ignored, say): its status is lost, and waiting would spin.
      if (reaped < 0 && errno != EINTR) {
        pump.finish();
        return false;
      }
      if (reaped != started.pid) return true;
      out.exited = true;
      add_usage(out.usage, usage);
      pump.finish();
      return false;
    });
  int keeper = started.keeper.pidfd.get();
  sdk::PumpControl control;
  control.deadline = deadline;
  control.stop = stop;
  control.terminate = [keeper] { send_signal(keeper, SIGTERM); };  // passed on to every process
  control.kill = kill_sandbox;
  sdk::PumpEnd end = pump.run(control);
  out.timed_out = end.timed_out;
  out.stopped = end.stopped;
  kill_sandbox();
  if (!out.exited) {
    rusage usage{};
    pid_t reaped;
    while ((reaped = ::wait4(started.pid, &out.wait_status, 0, &usage)) < 0 && errno == EINTR) {
    }
    out.exited = reaped == started.pid;  // else it ended without a status (fill_outcome)
    add_usage(out.usage, usage);
  }
  started.pid = -1;
  // A command that exited on its own just before the kill was not timed out or stopped.
  if (out.exited && WIFEXITED(out.wait_status)) out.timed_out = out.stopped = false;
  return out;
}

void reap_keeper(Started& started, Outcome& out) noexcept {
  if (!started.keeper) return;
  send_signal(started.keeper.pidfd.get(), SIGKILL);
  rusage usage{};
  while (::wait4(started.keeper.pid, nullptr, 0, &usage) < 0 && errno == EINTR) {
  }
  add_usage(out.usage, usage);
  recycle_arena(started.keeper);
  started.keeper = Keeper{};
}

}  // namespace cordon::landlock
