// The agent server's transport (`cordon mcp`): protocol lines out on stdout from any thread,
// messages in from stdin on a thread of their own, and the threads that answer tools/call.
#pragma once

#include <cordon/sdk/stop_token.hpp>

#include <boost/json.hpp>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "mcp_rpc.hpp"

namespace cordon::cli::mcp {

/// Calls that run side by side.
constexpr std::ptrdiff_t kParallel = 8;

/// stdout, which carries only protocol messages, one per line, from any thread.
class Out {
 public:
  /// Writes `text` and a newline; nothing once the client has gone (a write failed).
  void line(const std::string& text);

 private:
  std::mutex mutex_;
  bool gone_ = false;
};

/// The stdin side, on a thread of its own, so that a cancellation reaches the call in progress
/// and the end of stdin (the client went away) stops it. Malformed and oversized lines are
/// answered on `out` as JSON-RPC errors here.
class Inbox {
 public:
  explicit Inbox(Out& out);

  /// The next message for the main thread, which has answered the one before; nullopt once
  /// stdin has ended and nothing is queued.
  std::optional<Message> next();

  /// From now on (until given nothing), a tools/call goes to `calls` from the reader's thread
  /// when no message before it is still with the main thread, which would only pass it on: a
  /// hand-off between threads fewer per call, and the order of messages kept.
  void route_calls(std::function<void(Message)> calls);

  /// A call in progress: its id and stop token (stopped at once when stdin has ended).
  void bind(const boost::json::value& id, std::shared_ptr<StopToken> stop);
  /// The call is over; true when the client cancelled it (it then gets no answer).
  bool unbind(const boost::json::value& id);

  /// Sends `request` (a request of the server's with id `id`) and waits for the client's
  /// answer: its result, or nullopt when none came in `limit` or stdin ended.
  std::optional<boost::json::object> ask(const boost::json::value& id, const std::string& request,
                                         std::chrono::seconds limit);

 private:
  void take(std::string_view line);
  void loop();

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
  std::map<std::string, Call> calls_;                                  // by the request's id
  std::map<std::string, std::optional<boost::json::object>> answers_;  // the server's own requests
  std::thread reader_;
};

/// The threads that answer tools/call, kParallel of them, each taking the next call: a long
/// command does not hold up a poll of a background one, and calls beyond kParallel wait their
/// turn. They live as long as the server, so that a call does not pay for a thread's start and
/// end (measured: about 0.3 ms of the server's CPU time per call).
class Workers {
 public:
  explicit Workers(std::function<void(const Message&)> work);
  Workers(const Workers&) = delete;
  Workers& operator=(const Workers&) = delete;
  ~Workers() { finish(); }

  /// Queues a call for the next free worker.
  void submit(Message m);

  /// Answers every queued call, then ends the workers.
  void finish();

 private:
  void loop();

  std::function<void(const Message&)> work_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Message> queue_;
  bool closing_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace cordon::cli::mcp
