// The client side of `cordon serve --framed`, on a pooled connection.
#include "remote_server.hpp"

#include <libssh/libssh.h>
#include <poll.h>
#include <cordon/sdk/error.hpp>
#include <cordon/sdk/frames.hpp>

#include <algorithm>

#include "remote_cordon.hpp"
#include "remote_line.hpp"

namespace cordon::ssh {

namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kKillGrace = std::chrono::seconds(5);

bool send(ssh_channel ch, const std::string& bytes) {
  for (std::size_t at = 0; at < bytes.size();) {
    int n = ssh_channel_write(
        ch, bytes.data() + at,
        static_cast<std::uint32_t>(std::min<std::size_t>(bytes.size() - at, 32768)));
    if (n <= 0) return false;
    at += static_cast<std::size_t>(n);
  }
  return true;
}

// One run's exchange on the open server channel.
class Exchange {
 public:
  Exchange(Connection& c, const Plan& plan, std::chrono::milliseconds grace, OutputSink& sink)
      : c_(c), ch_(c.server->get()), plan_(plan), framed_(sink, true) {
    if (plan.deadline) hard_deadline_ = *plan.deadline + grace;
  }

  // Drives the run to its result frame; false when the server ended first (or was closed).
  bool run(Served& served) {
    for (;;) {
      // What libssh already holds first (a write may have taken packets in): the socket will
      // not announce it again.
      if (!take(served)) return false;
      if (served.result) return true;
      if (!ssh_channel_is_open(ch_) || ssh_channel_is_eof(ch_)) return false;
      act_on_stop_and_deadline(served);
      if (give_up_ && Clock::now() >= *give_up_) {
        served.killed = true;
        return false;
      }
      pollfd p{c_.fd(), POLLIN, 0};
      ::poll(&p, 1, wait_ms());
    }
  }

 private:
  int wait_ms() const {
    auto next = Clock::now() + std::chrono::milliseconds(100);  // the stop token's 100 ms rule
    if (hard_deadline_ && !kill_sent_) next = std::min(next, *hard_deadline_);
    if (give_up_) next = std::min(next, *give_up_);
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(next - Clock::now()).count();
    return static_cast<int>(std::max<long long>(0, ms));
  }

  void stop_frame(const char* level) { send(ch_, sdk::encode_frames(sdk::FrameTag::stop, level)); }

  void act_on_stop_and_deadline(Served& served) {
    auto asked = plan_.stop ? plan_.stop->requested() : StopToken::Level::none;
    if (asked >= StopToken::Level::terminate && !term_sent_) {
      term_sent_ = true;
      stop_frame("terminate");
    }
    bool late = hard_deadline_ && Clock::now() >= *hard_deadline_;
    if ((asked == StopToken::Level::kill || late) && !kill_sent_) {
      kill_sent_ = true;
      served.timed_out = late;
      stop_frame("kill");
      give_up_ = Clock::now() + kKillGrace;
    }
  }

  // What libssh holds for either stream, through the framed sink; false when the connection
  // failed. Throws CRD5003 when the stream is not cordon's framing.
  bool take(Served& served) {
    char buf[65536];
    for (int stream : {0, 1})
      for (;;) {
        int n = ssh_channel_read_nonblocking(ch_, buf, sizeof buf, stream);
        if (n == SSH_ERROR) return false;
        if (n <= 0) break;
        framed_.write(stream == 0 ? Stream::out : Stream::err,
                      std::string_view(buf, static_cast<std::size_t>(n)));
      }
    if (framed_.broken()) throw Error(code::kBackendFault, framed_.diagnostics());
    served.accepted = framed_.accepted();
    served.result = framed_.result();
    served.diagnostics = framed_.diagnostics();
    return true;
  }

  Connection& c_;
  ssh_channel ch_;
  const Plan& plan_;
  FramedChannelSink framed_;
  std::optional<Clock::time_point> hard_deadline_;
  std::optional<Clock::time_point> give_up_;
  bool term_sent_ = false;
  bool kill_sent_ = false;
};

}  // namespace

std::string serve_line(const std::string& cordon_path) {
  return "exec " + sh_quote(cordon_path) + " serve --framed";
}

namespace {

// Whether the server channel is still there; takes in what the host sent while it was idle.
bool open_and_alive(Connection& c) {
  if (!c.server) return false;
  ssh_channel ch = c.server->get();
  int pending = ssh_channel_poll(ch, 0);
  return pending != SSH_ERROR && pending != SSH_EOF && ssh_channel_is_open(ch) &&
         !ssh_channel_is_eof(ch);
}

}  // namespace

Served serve_run(Connection& c, const std::string& cordon_path, const std::string& request,
                 const Plan& plan, std::chrono::milliseconds grace, OutputSink& sink) {
  // A server that ended while idle, or one that ended before it took the request (it ran
  // nothing of it), is replaced once.
  for (int attempt = 0;; ++attempt) {
    if (!open_and_alive(c)) c.server = c.exec(serve_line(cordon_path));
    Served served;
    bool answered = false;
    try {
      answered = send(c.server->get(), sdk::encode_frame(sdk::FrameTag::request, request)) &&
                 Exchange(c, plan, grace, sink).run(served);
    } catch (const Error&) {
      c.server.reset();  // framing that cannot be believed: this server is done
      throw;
    }
    if (answered) return served;
    c.server.reset();  // the next run starts another
    if (served.accepted || served.killed || served.timed_out || attempt > 0) return served;
  }
}

}  // namespace cordon::ssh
