// The backend toolkit's pump (cordon/sdk/pump.hpp): one poll loop over the command's streams,
// the backend's own descriptors, the deadline and the stop token.
#include <cordon/sdk/pump.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

namespace cordon::sdk {

namespace {

using SteadyClock = std::chrono::steady_clock;

// A write to a pipe whose reader is gone must not kill cordon: SIGPIPE is blocked in this
// thread while the loop runs, and a pending one is consumed before the mask is restored.
class SigpipeGuard {
 public:
  SigpipeGuard() { ::pthread_sigmask(SIG_BLOCK, &pipe_only(), &old_); }
  ~SigpipeGuard() {
    timespec zero{0, 0};
    while (::sigtimedwait(&pipe_only(), nullptr, &zero) == SIGPIPE) {
    }
    ::pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;

 private:
  static const sigset_t& pipe_only() {
    static const sigset_t set = [] {
      sigset_t s;
      sigemptyset(&s);
      sigaddset(&s, SIGPIPE);
      return s;
    }();
    return set;
  }
  sigset_t old_;
};

void set_nonblocking(int fd) {
  if (fd >= 0) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
}

int millis_until(SteadyClock::time_point when) {
  auto left = std::chrono::ceil<std::chrono::milliseconds>(when - SteadyClock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 60000));
}

}  // namespace

struct Pump::State {
  struct Output {
    Stream stream;
    Source source;  ///< a local descriptor has source.fd and no source.read
    bool open = true;
  };
  struct Input {
    Drain drain;  ///< a local descriptor has drain.fd and no drain.write
    std::string data;
    std::size_t sent = 0;
    bool open = true;
  };
  struct Watch {
    int fd;
    std::function<bool()> on_ready;
    bool active = true;
  };

  /// What a polled descriptor stands for: kept in a vector reused pass after pass, so a
  /// wake-up allocates nothing.
  struct Ready {
    enum class Kind : std::uint8_t { output, input, watch, wake } kind;
    std::size_t index = 0;  ///< into outputs or watches
  };

  explicit State(OutputSink& s) : sink(s) {}
  ~State() { close_input(); }

  void close_input() {
    if (input && input->open && !input->drain.write && input->drain.fd >= 0)
      ::close(input->drain.fd);
    if (input) input->open = false;
  }

  bool streams_open() const {
    return std::any_of(outputs.begin(), outputs.end(), [](const Output& o) { return o.open; });
  }
  bool watching() const {
    return std::any_of(watches.begin(), watches.end(), [](const Watch& w) { return w.active; });
  }

  void read_local(Output& o) {
    char buf[65536];
    ssize_t got = ::read(o.source.fd, buf, sizeof buf);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (got <= 0) {
      o.open = false;
      return;
    }
    sink.write(o.stream, std::string_view(buf, static_cast<std::size_t>(got)));
  }

  void read_source(Output& o) {
    std::string chunk;
    IoStatus status = o.source.read(chunk);
    if (!chunk.empty()) sink.write(o.stream, chunk);
    if (status == IoStatus::end) o.open = false;
  }

  void feed() {
    Input& in = *input;
    std::string_view rest(in.data.data() + in.sent, in.data.size() - in.sent);
    if (!in.drain.write) {
      ssize_t put = ::write(in.drain.fd, rest.data(), rest.size());
      if (put < 0 && (errno == EINTR || errno == EAGAIN)) return;
      if (put > 0) in.sent += static_cast<std::size_t>(put);
      if (put < 0 || in.sent == in.data.size()) close_input();  // done, or the reader is gone
      return;
    }
    std::size_t taken = 0;
    IoStatus status = in.drain.write(rest, taken);
    in.sent += std::min(taken, rest.size());
    if (status == IoStatus::end || rest.empty()) in.open = false;  // gone, or EOF sent
  }

  void serve(Ready r, const PumpControl& control) {
    switch (r.kind) {
      case Ready::Kind::output: {
        Output& o = outputs[r.index];
        o.source.read ? read_source(o) : read_local(o);
        break;
      }
      case Ready::Kind::input:
        feed();
        break;
      case Ready::Kind::watch:
        watches[r.index].active = watches[r.index].on_ready();
        break;
      case Ready::Kind::wake:
        control.stop->drain_wake();
        break;
    }
  }

  OutputSink& sink;
  std::vector<Output> outputs;
  std::optional<Input> input;
  std::vector<Watch> watches;
  bool finish_asked = false;
};

Pump::Pump(OutputSink& sink) : state_(std::make_unique<State>(sink)) {}
Pump::~Pump() = default;

void Pump::output(Stream stream, int fd) {
  set_nonblocking(fd);
  state_->outputs.push_back({stream, Source{fd, {}}, fd >= 0});
}

void Pump::output(Stream stream, Source source) {
  state_->outputs.push_back({stream, std::move(source), true});
}

void Pump::input(int fd, std::string data) {
  state_->close_input();
  set_nonblocking(fd);
  state_->input = State::Input{Drain{fd, {}}, std::move(data), 0, fd >= 0};
  if (state_->input->data.empty()) state_->close_input();
}

void Pump::input(Drain drain, std::string data) {
  state_->close_input();
  state_->input = State::Input{std::move(drain), std::move(data), 0, true};
}

void Pump::watch(int fd, std::function<bool()> on_ready) {
  state_->watches.push_back({fd, std::move(on_ready), fd >= 0});
}

void Pump::finish() { state_->finish_asked = true; }

PumpEnd Pump::run(const PumpControl& control) {
  SigpipeGuard guard;
  State& s = *state_;
  PumpEnd end;
  auto kill = [&] {
    if (end.killed) return;
    end.killed = true;
    if (control.kill) control.kill();
  };
  // Each pass: who is waited on, how long, then what the time and the token say, then service.
  std::vector<pollfd> fds;
  std::vector<State::Ready> serve;
  std::optional<SteadyClock::time_point> linger_until;
  try {
    while (s.streams_open() || s.watching()) {
      if (!s.watching() && control.linger) {
        if (!linger_until) linger_until = SteadyClock::now() + *control.linger;
        if (SteadyClock::now() >= *linger_until) break;
      }
      fds.clear();
      serve.clear();
      bool tick = false;
      using Kind = State::Ready::Kind;
      auto wait_on = [&](int fd, short events, Kind kind, std::size_t index) {
        fds.push_back({fd, events, 0});
        serve.push_back({kind, index});
      };
      for (std::size_t k = 0; k < s.outputs.size(); ++k) {
        if (!s.outputs[k].open) continue;
        if (s.outputs[k].source.fd >= 0)
          wait_on(s.outputs[k].source.fd, POLLIN, Kind::output, k);
        else
          tick = true;
      }
      if (s.input && s.input->open) {
        if (s.input->drain.fd >= 0)
          wait_on(s.input->drain.fd, POLLOUT, Kind::input, 0);
        else
          tick = true;
      }
      for (std::size_t k = 0; k < s.watches.size(); ++k)
        if (s.watches[k].active) wait_on(s.watches[k].fd, POLLIN, Kind::watch, k);
      int wake = control.stop && !end.killed ? control.stop->wake_fd() : -1;
      if (wake >= 0) wait_on(wake, POLLIN, Kind::wake, 0);
      if (control.stop && !end.killed && wake < 0) tick = true;

      int timeout = -1;
      auto sooner = [&](int ms) { timeout = timeout < 0 ? ms : std::min(timeout, ms); };
      if (control.deadline && !end.killed) sooner(millis_until(*control.deadline));
      if (linger_until) sooner(millis_until(*linger_until));
      if (tick) sooner(static_cast<int>(control.tick.count()));
      int ready = ::poll(fds.data(), static_cast<nfds_t>(fds.size()), timeout);
      if (ready < 0 && errno != EINTR) {
        kill();  // cannot wait on the streams any more: end the run rather than spin
        break;
      }

      auto asked = control.stop ? control.stop->requested() : StopToken::Level::none;
      if (asked >= StopToken::Level::terminate && !end.terminated && !end.killed) {
        end.terminated = true;
        if (control.terminate) control.terminate();
      }
      if (asked == StopToken::Level::kill && !end.killed) {
        end.stopped = true;
        kill();
      }
      if (control.deadline && !end.killed && SteadyClock::now() >= *control.deadline) {
        end.timed_out = true;
        kill();
      }
      for (std::size_t i = 0; ready > 0 && i < fds.size(); ++i)
        if (fds[i].revents) s.serve(serve[i], control);
      if (tick) {
        for (auto& o : s.outputs)
          if (o.open && o.source.fd < 0) s.read_source(o);
        if (s.input && s.input->open && s.input->drain.fd < 0) s.feed();
      }
      if (s.finish_asked) kill();
    }
  } catch (...) {  // a callback's cordon::Error, or worse: the run ends either way
    s.close_input();
    kill();
    throw;
  }
  s.close_input();
  return end;
}

}  // namespace cordon::sdk
