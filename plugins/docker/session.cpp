// The attached run's loop: one thread, poll() at most 100 ms at a time.
#include "session.hpp"

#include <poll.h>

#include <algorithm>
#include <functional>
#include <thread>

#include "frames.hpp"
#include "trailer_hold.hpp"

namespace cordon::docker {

namespace {

using Clock = std::chrono::steady_clock;

// The waiter (and the daemon's init, tini) start their exec failures so.
constexpr std::string_view kInitPrefix = "[FATAL ";
constexpr auto kKillGrace = std::chrono::seconds(30);

// Holds stderr back while it could still be the init's exec-failure line, then passes it on.
class StderrGate {
 public:
  explicit StderrGate(OutputSink& sink) : sink_(sink) {}
  void write(std::string_view chunk) {
    if (open_) {
      sink_.write(Stream::err, chunk);
      return;
    }
    held_.append(chunk);
    std::size_t n = std::min(held_.size(), kInitPrefix.size());
    bool line = held_.find('\n') != std::string::npos;
    if (held_.compare(0, n, kInitPrefix.substr(0, n)) != 0 || held_.size() > 4096 ||
        (line && init_exec_failure(held_).empty()))
      release();
  }
  void release() {
    open_ = true;
    if (!held_.empty()) sink_.write(Stream::err, held_);
    held_.clear();
  }
  const std::string& held() const { return held_; }

 private:
  OutputSink& sink_;
  std::string held_;
  bool open_ = false;
};

struct Loop {
  const Plan& plan;
  const std::optional<std::string>& input;
  bool close_stdin;
  const Container& container;
  RawStream& stream;
  ExitWaiter* waiter;
  SessionOutcome out;
  std::size_t stdin_sent = 0;
  bool stdin_closed = false;
  StopToken::Level acted = StopToken::Level::none;

  bool stdin_pending() const { return input && !stdin_closed; }

  void feed_stdin() {
    if (!stdin_pending()) return;
    const std::string& data = *input;
    stdin_sent += stream.send_some(std::string_view(data).substr(stdin_sent));
    if (stdin_sent >= data.size()) {
      if (close_stdin) stream.close_write();
      stdin_closed = true;
    }
  }

  // The deadline and stop requests; returns how long poll() may wait.
  int police() {
    auto now = Clock::now();
    if (plan.deadline && now >= *plan.deadline && !out.timed_out && !out.stopped) {
      out.timed_out = true;
      container.kill("SIGKILL");
    }
    if (plan.stop) {
      auto level = plan.stop->requested();
      if (level > acted && !out.timed_out) {
        acted = level;
        if (level == StopToken::Level::kill) out.stopped = true;
        container.kill(level == StopToken::Level::kill ? "SIGKILL" : "SIGTERM");
      }
    }
    int ms = 100;
    if (plan.deadline && !out.timed_out) {
      auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(*plan.deadline - now).count();
      ms = static_cast<int>(std::clamp<long long>(left, 0, 100));
    }
    return ms;
  }
};

}  // namespace

std::string init_exec_failure(const std::string& stderr_head) {
  if (stderr_head.rfind(kInitPrefix, 0) != 0) return {};
  auto exec = stderr_head.find("] exec ");
  if (exec == std::string::npos) return {};
  std::string what = stderr_head.substr(exec + 2);
  while (!what.empty() && (what.back() == '\n' || what.back() == '\r')) what.pop_back();
  return what;
}

namespace {

// The exit from the daemon's waiter; after a kill, a daemon that does not answer within the
// grace has gone astray.
void await_waiter(Loop& loop) {
  std::optional<Clock::time_point> killed_at;
  while (!loop.waiter->wait_for(loop.police())) {
    if ((loop.out.timed_out || loop.out.stopped) && !killed_at) killed_at = Clock::now();
    if (killed_at && Clock::now() - *killed_at > kKillGrace) {
      loop.waiter->cancel();
      loop.waiter->wait_for(5000);
      break;
    }
  }
  loop.out.status = loop.waiter->status();
  if (!loop.out.status && loop.out.daemon_error.empty())
    loop.out.daemon_error = loop.waiter->failure();
}

// A pooled container without the waiter's trailer (killed): its exit code from inspect.
void await_inspect(Loop& loop) {
  auto start = Clock::now();
  while (Clock::now() - start < kKillGrace) {
    loop.police();
    auto state = loop.container.inspect();
    const auto* st = state.if_contains("State");
    if (!st || !st->is_object()) {
      loop.out.daemon_error = "the container's state cannot be read";
      return;
    }
    const auto& o = st->as_object();
    if (o.contains("Running") && o.at("Running").is_bool() && !o.at("Running").as_bool()) {
      if (const auto* code = o.if_contains("ExitCode"); code && code->is_number())
        loop.out.status = code->to_number<std::int64_t>();
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  loop.out.daemon_error = "the container did not stop";
}

}  // namespace

SessionOutcome stream_session(const Plan& plan, const SessionIo& io, const Container& container,
                              RawStream& stream, OutputSink& sink) {
  Loop loop{plan, io.input, io.close_stdin, container, stream, io.waiter, {}};
  StderrGate gate(sink);
  // The waiter program ends both streams with its trailer, after every process of the
  // container is gone: once both are in, all output is, and the run is over.
  bool trailed = !io.nonce.empty();
  TrailerHold out([&sink](std::string_view d) { sink.write(Stream::out, d); }, io.nonce);
  TrailerHold err([&gate](std::string_view d) { gate.write(d); }, io.nonce);
  std::string system_error;
  FrameDecoder decoder([&](FrameStream s, std::string_view data) {
    if (s == FrameStream::out || s == FrameStream::stdin_echo) out.write(data);
    if (s == FrameStream::err) err.write(data);
    if (s == FrameStream::system_error) system_error.append(data);
  });
  bool open = true;
  std::optional<Clock::time_point> exited_at;
  std::string chunk;
  while (open) {
    int ms = loop.police();
    pollfd p{stream.fd(), static_cast<short>(POLLIN | (loop.stdin_pending() ? POLLOUT : 0)), 0};
    ::poll(&p, 1, ms);
    if (p.revents & POLLOUT) loop.feed_stdin();
    while ((open = stream.receive(chunk)) && !chunk.empty())
      if (!decoder.feed(chunk)) {
        loop.out.daemon_error = decoder.error();
        open = false;
      }
    // A one-shot run waits for the container's exit too, so that the daemon's state (an OOM
    // kill) is settled when the run ends.
    if (trailed && !io.waiter && out.status() && err.status()) break;
    // A container that exited has closed its streams; a daemon that keeps ours open is not
    // waited for long.
    if (io.waiter && io.waiter->done() && !exited_at) exited_at = Clock::now();
    if (exited_at && Clock::now() - *exited_at > std::chrono::seconds(2)) break;
  }
  err.finish();
  auto trailer = out.finish();
  if (io.waiter)
    await_waiter(loop);
  else if (!trailer)
    await_inspect(loop);
  // The trailer's status is the waiter's own word (a failed mount check is not an exit status).
  if (trailer) loop.out.status = trailer;
  if (!gate.held().empty()) {
    loop.out.init_error = init_exec_failure(gate.held());
    if (loop.out.init_error.empty()) gate.release();
  }
  if (!system_error.empty() && loop.out.daemon_error.empty())
    loop.out.daemon_error = "the daemon reported: " + system_error;
  return loop.out;
}

}  // namespace cordon::docker
