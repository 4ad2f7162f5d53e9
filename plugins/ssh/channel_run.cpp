// The pump around one exec channel.
#include "channel_run.hpp"

#include <libssh/callbacks.h>
#include <libssh/libssh.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include <cordon/sdk/error.hpp>
#include <cordon/sdk/owned_fd.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <optional>

#include "remote_line.hpp"

namespace cordon::ssh {

namespace {

// How long a killed run's channel may take to close before the connection is dropped.
constexpr int kKillGraceSeconds = 5;

class Run {
 public:
  Run(Connection& c, ssh_channel ch, OutputSink& sink)
      : c_(c),
        ch_(ch),
        sink_(sink),
        timer_(::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK)),
        events_(::epoll_create1(EPOLL_CLOEXEC)) {
    if (timer_.get() < 0 || events_.get() < 0)
      throw Error(code::kBackendResource, "cannot make a timer for the run");
    for (int fd : {c_.fd(), timer_.get()}) {
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.fd = fd;
      ::epoll_ctl(events_.get(), EPOLL_CTL_ADD, fd, &ev);
    }
    callbacks_.userdata = this;
    callbacks_.channel_exit_status_function = [](ssh_session, ssh_channel, int status, void* me) {
      static_cast<Run*>(me)->end_.status = status;
    };
    callbacks_.channel_exit_signal_function = [](ssh_session, ssh_channel, const char* name, int,
                                                 const char*, const char*, void* me) {
      static_cast<Run*>(me)->end_.signal = signal_number(name ? name : "");
    };
    ssh_callbacks_init(&callbacks_);
    ssh_set_channel_callbacks(ch_, &callbacks_);
    if (!packets_ || ssh_event_add_session(packets_, c_.session()) != SSH_OK)
      throw Error(code::kBackendResource, "cannot watch the ssh connection");
  }
  ~Run() {
    if (packets_) {
      if (!end_.dropped) ssh_event_remove_session(packets_, c_.session());  // drop() did
      ssh_event_free(packets_);
    }
    ssh_remove_channel_callbacks(ch_, &callbacks_);
  }

  int wait_fd() const { return events_.get(); }

  // The watch: moves what arrived; false once the channel has closed (or was given up).
  bool on_ready() {
    std::uint64_t fired = 0;
    (void)::read(timer_.get(), &fired, sizeof fired);
    if (give_up_ && std::chrono::steady_clock::now() >= *give_up_ && !closed()) drop();
    if (end_.dropped) return false;
    // Reading a stream stops taking packets in once the remote sent EOF: the exit status and
    // the close still arrive after it, so packets are taken in here.
    if (ssh_event_dopoll(packets_, 0) == SSH_ERROR && !ssh_channel_is_closed(ch_))
      throw Error(code::kServiceUnreachable,
                  c_.target().name() + " went away mid-run: " + ssh_get_error(c_.session()));
    drain();
    if (closed()) return false;
    if (give_up_) arm(*give_up_ - std::chrono::steady_clock::now());
    return true;
  }

  // Everything libssh holds for either stream, now: after any libssh call, data may sit in its
  // buffers with the socket no longer readable.
  void drain() {
    if (end_.dropped) return;
    char buf[65536];
    for (int stream : {0, 1}) {
      for (;;) {
        int n = ssh_channel_read_nonblocking(ch_, buf, sizeof buf, stream);
        if (n == SSH_ERROR && !ssh_channel_is_closed(ch_))
          throw Error(code::kServiceUnreachable,
                      c_.target().name() + " went away mid-run: " + ssh_get_error(c_.session()));
        if (n <= 0) break;
        std::string_view chunk(buf, static_cast<std::size_t>(n));
        stream == 0 ? out(chunk) : err(chunk);
      }
    }
  }

  sdk::IoStatus write_stdin(std::string_view data, std::size_t& taken) {
    taken = 0;
    if (end_.dropped || !ssh_channel_is_open(ch_)) return sdk::IoStatus::end;
    if (data.empty()) {
      ssh_channel_send_eof(ch_);
      return sdk::IoStatus::end;
    }
    std::size_t room = std::min<std::size_t>({data.size(), ssh_channel_window_size(ch_), 32768});
    if (room == 0) return sdk::IoStatus::more;
    int n = ssh_channel_write(ch_, data.data(), static_cast<std::uint32_t>(room));
    if (n == SSH_ERROR) return sdk::IoStatus::end;  // the command no longer reads its stdin
    taken = static_cast<std::size_t>(n);
    poke();
    return sdk::IoStatus::more;
  }

  void signal(const char* name) {
    if (end_.dropped) return;
    if (end_.pid <=
        0) {  // the process does not exist yet (or is unknown): the marker will bring the request
      pending_ = name;
      if (std::string_view(name) == "KILL") drop();
      return;
    }
    ssh_channel_request_send_signal(ch_, name);
    try {
      c_.capture(kill_line(end_.pid, name), kKillGraceSeconds);
    } catch (const Error&) {
      drop();
      return;
    }
    if (std::string_view(name) == "KILL")
      give_up_ = std::chrono::steady_clock::now() + std::chrono::seconds(kKillGraceSeconds);
    poke();
  }

  // A libssh call outside on_ready may have taken in packets (output, the close) that the
  // socket will not announce again: the watch runs once more, now.
  void poke() { arm(std::chrono::nanoseconds(1)); }

  ChannelEnd& end() { return end_; }

 private:
  bool closed() const {
    return ssh_channel_is_closed(ch_) ||
           (ssh_channel_is_eof(ch_) && (end_.status || end_.signal) &&
            ssh_channel_poll(ch_, 0) <= 0 && ssh_channel_poll(ch_, 1) <= 0);
  }

  void arm(std::chrono::steady_clock::duration in) {
    auto ns =
        std::max<std::int64_t>(1, std::chrono::duration_cast<std::chrono::nanoseconds>(in).count());
    itimerspec at{};
    at.it_value.tv_sec = static_cast<time_t>(ns / 1000000000);
    at.it_value.tv_nsec = static_cast<long>(ns % 1000000000);
    ::timerfd_settime(timer_.get(), 0, &at, nullptr);
  }

  // Ends the run by ending the connection: sshd's session process exits and the command's
  // parent-death signal (setpriv --pdeathsig) kills it.
  void drop() {
    end_.dropped = true;
    ::epoll_ctl(events_.get(), EPOLL_CTL_DEL, c_.fd(), nullptr);
    ssh_event_remove_session(packets_, c_.session());
    ssh_disconnect(c_.session());
  }

  void out(std::string_view chunk) {
    if (end_.pid) return sink_.write(Stream::out, chunk);
    head_.append(chunk);
    auto nl = head_.find('\n');
    if (nl == std::string::npos) return;
    std::string first = head_.substr(0, nl);
    std::string rest = head_.substr(nl + 1);
    head_.clear();
    if (first.rfind(kPidMarker, 0) == 0)
      end_.pid = std::strtol(first.c_str() + kPidMarker.size(), nullptr, 10);
    if (!end_.pid) {  // not the script's marker: nothing to hold back any more
      end_.pid = -1;
      sink_.write(Stream::out, first + "\n");
    }
    if (!rest.empty()) sink_.write(Stream::out, rest);
    if (pending_ && end_.pid > 0) {
      const char* name = pending_;
      pending_ = nullptr;
      signal(name);
    }
  }

  void err(std::string_view chunk) {
    if (!end_.pid && end_.setup_error.size() < 4096) end_.setup_error.append(chunk);
    sink_.write(Stream::err, chunk);
  }

  Connection& c_;
  ssh_channel ch_;
  OutputSink& sink_;
  OwnedFd timer_;
  OwnedFd events_;
  ssh_channel_callbacks_struct callbacks_{};
  ssh_event packets_ = ssh_event_new();
  ChannelEnd end_;
  std::string head_;
  const char* pending_ = nullptr;
  /// After a kill: when the channel must have closed, or the connection is dropped.
  std::optional<std::chrono::steady_clock::time_point> give_up_;
};

}  // namespace

int signal_number(const std::string& name) {
  for (int n = 1; n < NSIG; ++n)
    if (const char* abbrev = ::sigabbrev_np(n); abbrev && name == abbrev) return n;
  return 0;
}

ChannelEnd run_channel(Connection& connection, Channel& channel, const Plan& plan,
                       OutputSink& sink) {
  Run run(connection, channel.get(), sink);
  sdk::Pump pump(sink);
  pump.watch(run.wait_fd(), [&run] { return run.on_ready(); });
  if (plan.stdin_data && !plan.stdin_data->empty())
    pump.input(sdk::Drain{-1, [&run](std::string_view data,
                                     std::size_t& taken) { return run.write_stdin(data, taken); }},
               *plan.stdin_data);
  else
    ssh_channel_send_eof(channel.get());
  sdk::PumpControl control;
  control.deadline = plan.deadline;
  control.stop = plan.stop;
  control.terminate = [&run] { run.signal("TERM"); };
  control.kill = [&run] { run.signal("KILL"); };
  control.tick = std::chrono::milliseconds(10);
  run.poke();  // what arrived with the channel's opening
  sdk::PumpEnd pumped = pump.run(control);
  ChannelEnd end = run.end();
  end.pump = pumped;
  if (end.pid < 0) end.pid = 0;
  return end;
}

}  // namespace cordon::ssh
