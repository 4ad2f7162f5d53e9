// The backend toolkit: the loop that stands between a running command and cordon.
//
// Every backend has one, whatever runs the command — a local child, a sandbox's keeper, a
// remote channel, an HTTP stream: stream stdout and stderr to the OutputSink as they arrive,
// feed stdin without SIGPIPE, end the run at its deadline, pass the StopToken's requests on
// (terminate, then kill; a request made before the loop starts is not lost), and keep going
// until every stream has ended. The backend says what "terminate" and "kill" mean for it; the
// pump says when.
//
//   sdk::Pump pump(sink);
//   pump.output(Stream::out, out_fd);
//   pump.output(Stream::err, err_fd);
//   pump.input(in_fd, plan.stdin_data.value_or(""));
//   pump.watch(pidfd, [&] { reap(); return false; });  // an extra descriptor of the backend's
//   sdk::PumpEnd end = pump.run({plan.deadline, plan.stop, terminate_tree, kill_tree});
//
// A stream that is not a local descriptor (libssh's channel, a libcurl transfer) is a Source:
// a descriptor to wait on when there is one (ssh_get_fd), else the pump asks it every tick.
#pragma once

#include <cordon/sdk/backend.hpp>
#include <cordon/sdk/export.hpp>
#include <cordon/sdk/stop_token.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::sdk {

/// What a Source's read or a Drain's write did.
enum class IoStatus {
  more,  ///< moved what there was; call again when ready
  end    ///< the stream has ended (or failed): the pump forgets it
};

/// A stream of the command's output that is not a plain descriptor.
struct Source {
  /// Readable when there may be data; -1: the pump calls `read` every `tick` instead.
  int fd = -1;
  /// Appends what is available now to `into` (never blocks). May throw cordon::Error: the
  /// stream ends and run() rethrows it after the loop.
  std::function<IoStatus(std::string& into)> read;
};

/// Where the command's stdin goes when it is not a plain descriptor.
struct Drain {
  int fd = -1;  ///< writable when it may take more; -1: asked every tick
  /// Writes a prefix of `data` (never blocks); `taken` gets how many bytes it took. `end`
  /// when the far side is gone. Called with an empty `data` once all was taken: send EOF.
  std::function<IoStatus(std::string_view data, std::size_t& taken)> write;
};

/// How the run is ended early, in the backend's own terms.
struct PumpControl {
  /// When the run is killed (kill) and PumpEnd::timed_out set. nullopt: no deadline, or
  /// another process keeps it.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  std::shared_ptr<StopToken> stop;  ///< watched until the run is killed
  /// The StopToken's first level: ask the whole tree to end (SIGTERM). Called at most once.
  std::function<void()> terminate;
  /// End the whole tree now (SIGKILL, destroy the sandbox); its streams then reach their end.
  /// Called at most once: at the deadline, on a kill request, or by finish().
  std::function<void()> kill;
  /// Once no watch is left, how long the output streams may take to end before the pump
  /// gives up on them (a grandchild holding a pipe open). nullopt: wait for them.
  std::optional<std::chrono::milliseconds> linger;
  /// How often a Source or Drain without a descriptor, and a StopToken without a wake-up
  /// descriptor, are looked at.
  std::chrono::milliseconds tick{20};
};

/// How the loop ended.
struct PumpEnd {
  bool timed_out = false;   ///< the deadline passed and kill() was called for it
  bool stopped = false;     ///< the StopToken asked for a kill and kill() was called
  bool terminated = false;  ///< terminate() was called
  bool killed = false;      ///< kill() was called, for whatever reason
};

/// The loop; one per run, on the thread that runs it. SIGPIPE is blocked on that thread while
/// run() feeds stdin, and a pending one is consumed before it returns.
class CORDON_API Pump {
 public:
  explicit Pump(OutputSink& sink);
  ~Pump();
  Pump(const Pump&) = delete;
  Pump& operator=(const Pump&) = delete;

  /// A local descriptor of the command's `stream` (made non-blocking), read until its end.
  /// The pump does not close it.
  void output(Stream stream, int fd);
  /// A stream of the command's output that is not a plain descriptor.
  void output(Stream stream, Source source);
  /// Feeds `data` to the descriptor (made non-blocking), then closes it: the command sees EOF.
  /// Empty data closes it at once. The pump owns `fd` from here on.
  void input(int fd, std::string data);
  /// Feeds `data` through `drain`, then writes empty data once (EOF).
  void input(Drain drain, std::string data);
  /// An extra descriptor of the backend's (a report pipe, a pidfd): `on_ready` runs when it is
  /// readable and returns whether to keep watching it. run() returns only once every watch
  /// has finished and every output stream has ended. May throw cordon::Error, as Source.
  void watch(int fd, std::function<bool()> on_ready);
  /// Calls control.kill now (once), e.g. when the command's process has exited and whatever
  /// it left behind must go. Only from inside run(): a watch's or a source's callback.
  void finish();

  /// Runs until every stream has ended and every watch has finished. Output reaches the sink
  /// on this thread. Rethrows the first cordon::Error a callback threw, after calling kill().
  PumpEnd run(const PumpControl& control);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace cordon::sdk
