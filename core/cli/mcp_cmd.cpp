// `cordon mcp`: cordon as a Model Context Protocol server on stdio, for agent hosts. One
// long-lived process: the policy, backend and workspace fixed by the operator at start, the
// backends probed once, each tools/call a run (or a file operation) under that ceiling.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include <cordon/sdk/log.hpp>

#include <memory>
#include <optional>
#include <string_view>

#include "mcp_rpc.hpp"
#include "mcp_tools.hpp"
#include "verbs.hpp"

namespace cordon::cli::mcp {

namespace {

namespace json = boost::json;

}  // namespace

// Calls that run side by side.
constexpr std::ptrdiff_t kParallel = 8;

struct McpArgs {
  std::string policy;
  std::optional<std::string> backend;
  std::optional<std::string> workspace;
  bool keep_jobs = false;
  std::vector<std::string> approve;
  RuntimeOptions runtime;
};

namespace {

// stdout carries only protocol messages, one per line, from any thread.
class Out {
 public:
  void line(const std::string& text) {
    std::lock_guard lock(mutex_);
    if (gone_) return;
    // A client gone mid-answer must not kill the server with SIGPIPE (its background commands
    // would outlive it): blocked on this thread, a raised one is taken back before unblocking.
    sigset_t pipe_signal, old;
    sigemptyset(&pipe_signal);
    sigaddset(&pipe_signal, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_signal, &old);
    std::string l = text + "\n";
    for (std::size_t at = 0; at < l.size();) {
      ssize_t n = ::write(1, l.data() + at, l.size() - at);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        gone_ = true;  // the client is gone; the reader sees stdin end
        break;
      }
      at += static_cast<std::size_t>(n);
    }
    timespec now{};
    while (sigtimedwait(&pipe_signal, nullptr, &now) == SIGPIPE) {
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
  }

 private:
  std::mutex mutex_;
  bool gone_ = false;
};

// The stdin side, on a thread of its own, so that a cancellation reaches the call in progress
// and the end of stdin (the client went away) stops it.
class Inbox {
 public:
  explicit Inbox(Out& out) : out_(out), reader_([this] { loop(); }) { reader_.detach(); }

  /// The next message for the main thread, which has answered the one before.
  std::optional<Message> next() {
    std::unique_lock lock(mutex_);
    main_busy_ = false;
    ready_.wait(lock, [this] { return !queue_.empty() || closed_; });
    if (queue_.empty()) return std::nullopt;
    Message m = std::move(queue_.front());
    queue_.pop_front();
    main_busy_ = true;
    return m;
  }

  /// From now on (until given nothing), a tools/call goes to `calls` from the reader's thread
  /// when no message before it is still with the main thread, which would only pass it on: a
  /// hand-off between threads fewer per call, and the order of messages kept.
  void route_calls(std::function<void(Message)> calls) {
    std::lock_guard lock(mutex_);
    route_ = std::move(calls);
  }

  // A call in progress: its id and stop token.
  void bind(const json::value& id, std::shared_ptr<StopToken> stop) {
    std::lock_guard lock(mutex_);
    if (closed_) stop->request(StopToken::Level::kill);
    calls_[json::serialize(id)] = {std::move(stop), false};
  }
  // The call is over; true when the client cancelled it (it then gets no answer).
  bool unbind(const json::value& id) {
    std::lock_guard lock(mutex_);
    auto it = calls_.find(json::serialize(id));
    bool cancelled = it != calls_.end() && it->second.cancelled;
    if (it != calls_.end()) calls_.erase(it);
    return cancelled;
  }

  // Sends `request` (a request of the server's with id `id`) and waits for the client's answer:
  // its result, or nullopt when none came in `limit` or stdin ended.
  std::optional<json::object> ask(const json::value& id, const std::string& request,
                                  std::chrono::seconds limit) {
    std::string key = json::serialize(id);
    std::unique_lock lock(mutex_);
    answers_[key].reset();
    lock.unlock();
    out_.line(request);
    lock.lock();
    ready_.wait_for(lock, limit, [&] { return answers_[key].has_value() || closed_; });
    auto got = std::move(answers_[key]);
    answers_.erase(key);
    return got;
  }

 private:
  void take(std::string_view line) {
    auto m = parse_message(line);
    if (!m) {
      out_.line(error_line(nullptr, kParseError, "not JSON"));
      return;
    }
    if (m->kind == Message::Kind::notification && m->method == "notifications/cancelled") {
      const auto* id = m->params.if_contains("requestId");
      std::lock_guard lock(mutex_);
      if (auto it = id ? calls_.find(json::serialize(*id)) : calls_.end(); it != calls_.end()) {
        it->second.cancelled = true;
        it->second.stop->request(StopToken::Level::kill);
      }
      return;
    }
    std::lock_guard lock(mutex_);
    if (route_ && queue_.empty() && !main_busy_ && m->kind == Message::Kind::request &&
        m->method == "tools/call") {
      route_(std::move(*m));
      return;
    }
    if (m->kind == Message::Kind::response) {
      if (auto it = answers_.find(json::serialize(m->id)); it != answers_.end()) {
        it->second = std::move(m->params);
        ready_.notify_all();
      }
      return;  // a response to nothing of ours is dropped
    }
    queue_.push_back(std::move(*m));
    ready_.notify_all();
  }

  void loop() {
    std::string line;
    bool skipping = false;  // inside a line too long to be a message
    char buf[65536];
    for (;;) {
      ssize_t n = ::read(0, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      std::string_view chunk(buf, static_cast<std::size_t>(n));
      while (!chunk.empty()) {
        auto nl = chunk.find('\n');
        std::string_view part = chunk.substr(0, nl);
        if (!skipping) line.append(part);
        if (line.size() > kMaxMessageBytes) {
          if (!skipping)
            out_.line(error_line(nullptr, kParseError, "a message is larger than 16 MiB"));
          skipping = true;
          line.clear();
        }
        if (nl == std::string_view::npos) break;
        if (!skipping && !line.empty() && line != "\r") take(line);
        line.clear();
        skipping = false;
        chunk.remove_prefix(nl + 1);
      }
    }
    std::lock_guard lock(mutex_);
    closed_ = true;
    for (auto& [id, call] : calls_) call.stop->request(StopToken::Level::kill);
    ready_.notify_all();
  }

  Out& out_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Message> queue_;
  bool closed_ = false;
  bool main_busy_ = false;              // the main thread has a message in hand
  std::function<void(Message)> route_;  // where calls go past the main thread
  struct Call {
    std::shared_ptr<StopToken> stop;
    bool cancelled = false;
  };
  std::map<std::string, Call> calls_;                           // by the request's id
  std::map<std::string, std::optional<json::object>> answers_;  // the server's own requests
  std::thread reader_;
};

// The threads that answer tools/call, kParallel of them, each taking the next call: a long
// command does not hold up a poll of a background one, and calls beyond kParallel wait their
// turn. They live as long as the server, so that a call does not pay for a thread's start and
// end (measured: about 0.3 ms of the server's CPU time per call).
class Workers {
 public:
  explicit Workers(std::function<void(const Message&)> work) : work_(std::move(work)) {
    for (std::ptrdiff_t i = 0; i < kParallel; ++i) threads_.emplace_back([this] { loop(); });
  }
  Workers(const Workers&) = delete;
  Workers& operator=(const Workers&) = delete;
  ~Workers() { finish(); }

  /// Queues a call for the next free worker.
  void submit(Message m) {
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(m));
    }
    ready_.notify_one();
  }

  /// Answers every queued call, then ends the workers.
  void finish() {
    {
      std::lock_guard lock(mutex_);
      closing_ = true;
    }
    ready_.notify_all();
    for (auto& t : threads_)
      if (t.joinable()) t.join();
  }

 private:
  void loop() {
    for (;;) {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [this] { return !queue_.empty() || closing_; });
      if (queue_.empty()) return;
      Message m = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      work_(m);
    }
  }

  std::function<void(const Message&)> work_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Message> queue_;
  bool closing_ = false;
  std::vector<std::thread> threads_;
};

json::object initialize_result(const json::object& params) {
  std::string asked;
  if (const auto* v = params.if_contains("protocolVersion"); v && v->is_string())
    asked = std::string(v->as_string());
  return {{"protocolVersion", negotiate(asked)},
          {"capabilities", json::object{{"tools", json::object{{"listChanged", false}}},
                                        {"logging", json::object{}}}},
          {"serverInfo", json::object{{"name", "cordon"}, {"version", CORDON_VERSION}}},
          {"instructions",
           "Commands run in cordon's sandbox under the operator's policy, in the workspace. "
           "Pass argv (or a command without shell operators); write files with write_file."}};
}

// One request; its answer (nullopt: none, the client cancelled it).
// What the client said of itself in initialize.
struct Client {
  bool elicitation = false;
  std::atomic<int> asked{0};
  /// cordon's log lines at or above this go to the client (notifications/message).
  std::shared_ptr<std::atomic<log::Level>> log_level =
      std::make_shared<std::atomic<log::Level>>(log::Level::warn);
};

// MCP's levels (those of syslog) onto cordon's: notice is info; alert and emergency are error.
std::optional<log::Level> log_level(std::string_view name) {
  if (name == "debug") return log::Level::debug;
  if (name == "info" || name == "notice") return log::Level::info;
  if (name == "warning") return log::Level::warn;
  if (name == "error" || name == "critical" || name == "alert" || name == "emergency")
    return log::Level::error;
  return std::nullopt;
}

const char* mcp_level(log::Level level) {
  switch (level) {
    case log::Level::trace:
    case log::Level::debug:
      return "debug";
    case log::Level::info:
      return "info";
    case log::Level::warn:
      return "warning";
    case log::Level::error:
      break;
  }
  return "error";
}

// cordon's log, also to the client: a line on stderr is seen by no one when an agent host
// started the server.
void forward_log(Out& out, const Client& client) {
  auto logger = log::default_logger();
  if (!logger) return;
  log::add_forwarder(
      *logger,
      [&out](log::Level level, std::string_view line) {
        out.line(notification_line(
            "notifications/message",
            {{"level", mcp_level(level)}, {"logger", "cordon"}, {"data", std::string(line)}}));
      },
      client.log_level);
}

// Asks the client through elicitation/create; fails closed (false) on anything but "accept".
Ask asker(Client& client, Inbox& inbox) {
  if (!client.elicitation) return {};
  return [&client, &inbox](const std::string& message) -> std::optional<bool> {
    json::value id(json::string("cordon-approval-" + std::to_string(++client.asked)));
    json::object schema{{"type", "object"},
                        {"properties", json::object{{"approve", json::object{
                                                                    {"type", "boolean"},
                                                                    {"title", "Approve"},
                                                                }}}}};
    auto got = inbox.ask(
        id,
        request_line(id, "elicitation/create", {{"message", message}, {"requestedSchema", schema}}),
        std::chrono::seconds(300));
    if (!got) return false;
    const auto* action = got->if_contains("action");
    return action && action->is_string() && action->as_string() == "accept";
  };
}

std::optional<std::string> answer(const Message& m, Tools& tools, Inbox& inbox, Out& out,
                                  Client& client) {
  if (m.method == "initialize") {
    if (const auto* caps = m.params.if_contains("capabilities"); caps && caps->is_object())
      client.elicitation = caps->as_object().contains("elicitation");
    return result_line(m.id, initialize_result(m.params));
  }
  if (m.method == "ping") return result_line(m.id, json::object{});
  if (m.method == "logging/setLevel") {
    const auto* level = m.params.if_contains("level");
    auto wanted = level && level->is_string() ? log_level(level->as_string()) : std::nullopt;
    if (!wanted)
      return error_line(m.id, kInvalidParams,
                        "logging/setLevel needs a level: debug, info, notice, warning, error, "
                        "critical, alert or emergency");
    client.log_level->store(*wanted);
    return result_line(m.id, json::object{});
  }
  if (m.method == "tools/list") return result_line(m.id, json::object{{"tools", tools.list()}});
  if (m.method != "tools/call")
    return error_line(m.id, kMethodNotFound, "no method '" + m.method + "'");
  const auto* name = m.params.if_contains("name");
  const auto* args = m.params.if_contains("arguments");
  if (!name || !name->is_string() || (args && !args->is_object()))
    return error_line(m.id, kInvalidParams, "tools/call needs a tool name and an arguments object");
  auto stop = std::make_shared<StopToken>();
  inbox.bind(m.id, stop);
  Progress progress;
  if (const auto* meta = m.params.if_contains("_meta"); meta && meta->is_object())
    if (const auto* token = meta->as_object().if_contains("progressToken"))
      progress = [&out, token = *token](std::uint64_t bytes, const std::string& output) {
        out.line(notification_line(
            "notifications/progress",
            {{"progressToken", token}, {"progress", bytes}, {"message", output}}));
      };
  std::optional<std::string> reply;
  try {
    json::object result =
        tools.call(std::string(name->as_string()), args ? args->as_object() : json::object{}, stop,
                   progress, asker(client, inbox));
    reply = result_line(m.id, result);
  } catch (const InvalidParams& e) {
    reply = error_line(m.id, kInvalidParams, e.what());
  } catch (const std::exception& e) {
    reply = error_line(m.id, kInternalError, e.what());
  }
  if (inbox.unbind(m.id)) return std::nullopt;
  return reply;
}

}  // namespace

int mcp_main(const McpArgs& a) {
  for (const auto& c : a.approve)
    if (std::find(std::begin(kApprovalClasses), std::end(kApprovalClasses), c) ==
        std::end(kApprovalClasses))
      throw Error(code::kBadArgument, "--approve: unknown class '" + c + "'",
                  "the classes: shell-unsafe, network, background, write, all");
  ServerSetup setup{a.policy, a.backend, workspace_of(a.workspace), a.runtime, a.approve};
  Tools tools(std::move(setup));
  // Both outlive this function (the inbox's reader and the log's forwarder may still use them),
  // held by static pointers, as the inbox is, so that they are never destroyed nor leaked.
  static Out* const out_ptr = new Out;
  static Client* const client_ptr = new Client;
  Out& out = *out_ptr;
  Client& client = *client_ptr;
  forward_log(out, client);
  static Inbox* const inbox = new Inbox(out);  // its reader may outlive this function
  // tools/call on the workers; everything else is answered here, in order.
  Workers workers([&](const Message& m) {
    if (auto reply = answer(m, tools, *inbox, out, client)) out.line(*reply);
  });
  inbox->route_calls([&workers](Message m) { workers.submit(std::move(m)); });
  struct Unroute {  // before the workers go, however this function is left
    Inbox& inbox;
    ~Unroute() { inbox.route_calls(nullptr); }
  } unroute{*inbox};
  while (auto m = inbox->next()) {
    if (m->kind == Message::Kind::invalid) {
      out.line(error_line(m->id, kInvalidRequest, m->problem));
    } else if (m->kind == Message::Kind::request && m->method == "tools/call") {
      workers.submit(std::move(*m));
    } else if (m->kind == Message::Kind::request) {
      if (auto reply = answer(*m, tools, *inbox, out, client)) out.line(*reply);
    }  // notifications and responses to nothing of ours: nothing to say
  }
  // stdin has ended and every call in progress was killed: wait for them all to answer.
  workers.finish();
  tools.shutdown(a.keep_jobs);
  return 0;
}

}  // namespace cordon::cli::mcp

namespace cordon::cli {

void register_mcp(CLI::App& app) {
  using mcp::McpArgs;
  auto args = std::make_shared<McpArgs>();
  auto* mcp = app.add_subcommand(
      "mcp", "serve the Model Context Protocol on stdio: sandboxed commands and files for agents");
  mcp->add_option("--policy", args->policy,
                  "the operator's policy (file or preset): the ceiling of every call")
      ->required();
  mcp->add_option("--backend", args->backend, "the backend every call uses (default: dispatch)");
  mcp->add_option("--workspace", args->workspace, "the workspace (default: current directory)");
  mcp->add_option("--approve", args->approve,
                  "classes of calls the client must approve first, through MCP elicitation "
                  "(refused when it cannot be asked): shell-unsafe, network, background, write, "
                  "all")
      ->delimiter(',');
  mcp->add_flag("--keep-jobs", args->keep_jobs,
                "leave background commands running when the client goes away");
  add_runtime_options(mcp, args->runtime);
  mcp->callback([args] { run_verb(2, [&] { return mcp::mcp_main(*args); }); });
}

}  // namespace cordon::cli
