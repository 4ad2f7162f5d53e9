// envd's calls: Start as a stream read on a thread of its own, the unary signal, /files.
#include "envd.hpp"

#include <sys/socket.h>
#include <unistd.h>
#include <cordon/request.hpp>

#include <boost/json.hpp>

#include <atomic>
#include <mutex>
#include <thread>

#include "http.hpp"

namespace cordon::e2b {

namespace json = boost::json;

struct Envd::Call {
  Request request;
};

namespace {

// Reads one Start stream: `on_event` gets each event; returns how it ended.
Outcome read_stream(const Request& request, const std::function<void(const Event&)>& on_event,
                    const std::function<bool()>& cancelled) {
  Outcome o;
  EnvelopeReader reader;
  std::string raw;  // the start of the body, for a call that failed before streaming
  bool enveloped = true, ended = false;
  auto on_body = [&](std::string_view bytes) {
    if (raw.size() < 4096) raw.append(bytes.substr(0, 4096 - raw.size()));
    if (!enveloped || ended) return true;
    try {
      for (auto& env : reader.feed(bytes)) {
        if (env.flags & kEndStream) {
          ended = true;
          if (auto err = end_stream_error(env.payload))
            o.error = Error(o.pid ? code::kBackendFault : code::kIsolationFailed,
                            std::string("envd ") +
                                (o.pid ? "ended the command's stream with an error: "
                                       : "could not start the command: ") +
                                *err);
          break;
        }
        Event e = parse_event(env.payload);
        if (e.kind == Event::Kind::start) o.pid = e.pid;
        if (e.kind == Event::Kind::end) o.end = e;
        on_event(e);
      }
    } catch (const std::exception&) {
      enveloped = false;  // not envelopes: an error answer, reported from `raw`
    }
    return true;
  };
  long status = 0;
  try {
    status = stream(request, on_body, cancelled);
  } catch (const Error& e) {
    if (!o.error)
      o.error = o.pid ? Error(code::kServiceUnreachable,
                              std::string("envd's stream of the command broke off before its end "
                                          "(") +
                                  e.what() + ")")
                      : e;
    return o;
  }
  if (status != 200) {
    std::string message;
    boost::system::error_code ec;
    auto v = json::parse(raw, ec);
    if (!ec && v.is_object())
      if (const auto* m = v.as_object().if_contains("message"); m && m->is_string())
        message = std::string(m->as_string()).substr(0, 300);
    o.error = Error(
        status == 401 || status == 403 ? code::kCredentialsRefused : code::kServiceUnreachable,
        "envd answered " + std::to_string(status) + " to Start" +
            (message.empty() ? std::string() : ": " + message));
  } else if (!ended && !o.error && !cancelled()) {
    o.error = Error(code::kServiceUnreachable,
                    "envd's stream of the command broke off before its end (the connection was "
                    "cut)");
  }
  return o;
}

void send_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the reader is gone: what is left has nowhere to go
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

std::pair<int, int> socket_pair() {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    throw Error(code::kBackendFault, "socketpair failed");
  return {sv[0], sv[1]};
}

}  // namespace

Envd::Envd(const Settings& settings, Sandbox sandbox)
    : settings_(settings),
      sandbox_(std::move(sandbox)),
      base_(settings.envd_base(sandbox_.id, sandbox_.domain)) {}

std::vector<std::string> Envd::headers(const std::string& user) const {
  std::vector<std::string> h = {"E2b-Sandbox-Id: " + sandbox_.id, "E2b-Sandbox-Port: 49983",
                                "Authorization: Basic " + encode_base64(user + ":")};
  if (!sandbox_.access_token.empty()) h.push_back("X-Access-Token: " + sandbox_.access_token);
  return h;
}

Envd::Call Envd::start_call(const StartSpec& spec) const {
  json::object envs;
  for (const auto& [k, v] : spec.envs) envs[k] = v;
  json::array args;
  for (const auto& a : spec.args) args.emplace_back(a);
  json::object process{{"cmd", spec.cmd}, {"args", std::move(args)}, {"envs", std::move(envs)}};
  if (spec.cwd) process["cwd"] = *spec.cwd;
  json::object body{{"process", std::move(process)}, {"stdin", spec.stdin}};
  Call c;
  c.request.method = "POST";
  c.request.url = base_ + "/process.Process/Start";
  c.request.headers = headers(spec.user);
  c.request.headers.push_back("Content-Type: application/connect+json");
  c.request.headers.push_back("Connect-Protocol-Version: 1");
  c.request.headers.push_back("Keepalive-Ping-Interval: 50");
  if (spec.lifetime)
    c.request.headers.push_back("Connect-Timeout-Ms: " + std::to_string(spec.lifetime->count()));
  c.request.body = envelope(json::serialize(body));
  c.request.timeout = std::chrono::seconds(settings_.request_timeout);
  return c;
}

Collected Envd::run(const StartSpec& spec, std::chrono::milliseconds limit) const {
  Collected c;
  auto until = std::chrono::steady_clock::now() + limit;
  bool late = false;
  StartSpec bounded = spec;
  if (!bounded.lifetime) bounded.lifetime = limit;  // envd ends it too, should cordon go first
  c.outcome = read_stream(
      start_call(bounded).request,
      [&](const Event& e) {
        if (e.kind == Event::Kind::out) c.out += e.data;
        if (e.kind == Event::Kind::err) c.err += e.data;
      },
      [&] { return late = late || std::chrono::steady_clock::now() > until; });
  if (late && !c.outcome.end)
    c.outcome.error = Error(code::kServiceUnreachable,
                            "a command of cordon's in the sandbox did not end within " +
                                std::to_string(limit.count() / 1000) + " s");
  return c;
}

void Envd::signal(long pid, const std::string& name) const {
  Request r{"POST", base_ + "/process.Process/SendSignal", headers("root"), ""};
  r.headers.push_back("Content-Type: application/json");
  r.headers.push_back("Connect-Protocol-Version: 1");
  r.body = json::serialize(json::object{{"process", json::object{{"pid", pid}}}, {"signal", name}});
  r.timeout = std::chrono::seconds(settings_.request_timeout);
  Response a = send(r);
  if (a.status != 200)
    throw Error(code::kServiceUnreachable, "envd answered " + std::to_string(a.status) +
                                               " to a signal for pid " + std::to_string(pid));
}

void Envd::upload(const std::string& path, const std::string& bytes,
                  const std::string& user) const {
  Request r{"POST", base_ + "/files?path=" + url_escape(path) + "&username=" + url_escape(user),
            headers(user), bytes};
  r.file_part = true;
  r.timeout = std::chrono::seconds(settings_.request_timeout);
  Response a = send(r);
  if (a.status != 200)
    throw Error(code::kIsolationFailed,
                "copying " + path +
                    " into the sandbox failed: envd "
                    "answered " +
                    std::to_string(a.status),
                a.status == 507 ? "the sandbox's disk is full: copy less (upload_limit_mb)" : "");
}

std::optional<std::string> Envd::download(const std::string& path, const std::string& user) const {
  Request r{"GET", base_ + "/files?path=" + url_escape(path) + "&username=" + url_escape(user),
            headers(user), ""};
  r.timeout = std::chrono::seconds(settings_.request_timeout);
  Response a = send(r);
  if (a.status == 404) return std::nullopt;
  if (a.status != 200)
    throw Error(code::kServiceUnreachable, "copying " + path +
                                               " out of the sandbox failed: envd answered " +
                                               std::to_string(a.status));
  return std::move(a.body);
}

struct ProcessStream::State {
  std::atomic<bool> abandoned{false};
  std::atomic<long> pid{0};
  std::atomic<bool> ended{false};
  std::mutex mutex;
  Outcome outcome;
  std::thread thread;
  // Held back until the ready line (only the reading thread touches them before finish()).
  std::string ready_line;
  bool ready = false;
  std::string held_out, held_err;

  void deliver(const Event& e, int out_w, int err_w) {
    if (e.kind == Event::Kind::start) pid = e.pid;
    if (e.kind != Event::Kind::out && e.kind != Event::Kind::err) return;
    if (ready) {
      send_all(e.kind == Event::Kind::out ? out_w : err_w, e.data);
      return;
    }
    (e.kind == Event::Kind::out ? held_out : held_err) += e.data;
    if (held_out.size() < ready_line.size() || held_out.compare(0, ready_line.size(), ready_line))
      return;
    ready = true;
    send_all(out_w, std::string_view(held_out).substr(ready_line.size()));
    send_all(err_w, held_err);
    held_out.clear();
    held_err.clear();
  }
};

ProcessStream::ProcessStream(const Envd& envd, const StartSpec& spec, std::string ready)
    : state_(std::make_shared<State>()) {
  state_->ready_line = std::move(ready);
  state_->ready = state_->ready_line.empty();
  auto [out_r, out_w] = socket_pair();
  auto [err_r, err_w] = socket_pair();
  out_read_ = out_r;
  err_read_ = err_r;
  Request request = envd.start_call(spec).request;
  state_->thread = std::thread([s = state_, request, out_w = out_w, err_w = err_w] {
    Outcome o = read_stream(
        request, [&](const Event& e) { s->deliver(e, out_w, err_w); },
        [&] { return s->abandoned.load(); });
    ::close(out_w);
    ::close(err_w);
    std::lock_guard lock(s->mutex);
    s->outcome = std::move(o);
    s->ended = true;
  });
}

ProcessStream::~ProcessStream() {
  abandon();
  // Closing the read ends first: a thread blocked writing output nobody reads is released.
  if (out_read_ >= 0) ::close(out_read_);
  if (err_read_ >= 0) ::close(err_read_);
  if (state_->thread.joinable()) state_->thread.join();
}

long ProcessStream::pid() const { return state_->pid.load(); }

void ProcessStream::abandon() { state_->abandoned = true; }

bool ProcessStream::wait_ended(std::chrono::milliseconds limit) const {
  auto until = std::chrono::steady_clock::now() + limit;
  while (!state_->ended && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return state_->ended;
}

bool ProcessStream::ready() const { return state_->ready; }

std::string ProcessStream::setup_output() const {
  return state_->ready ? std::string() : state_->held_err + state_->held_out;
}

Outcome ProcessStream::finish() {
  if (state_->thread.joinable()) state_->thread.join();
  std::lock_guard lock(state_->mutex);
  return state_->outcome;
}

}  // namespace cordon::e2b
