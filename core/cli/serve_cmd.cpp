// `cordon serve --framed`: runs the requests framed on stdin one after another, each answered on
// stdout with its output frames and one result frame (cordon/sdk/frames.hpp). The backends are
// probed once for all of them: what a cordon on another machine keeps open for the ssh backend
// over one channel, so that a run there costs a request, not a process start and a probe.
#include <unistd.h>
#include <cordon/sdk/frames.hpp>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "run_input.hpp"
#include "run_output.hpp"
#include "runtime_options.hpp"
#include "stop_signals.hpp"
#include "verbs.hpp"

namespace cordon::cli {

namespace {

struct ServeArgs {
  bool framed = false;
  RuntimeOptions runtime;
};

// The stdin side, read by a thread of its own so that a stop frame reaches the run in progress.
// At the end of stdin (the caller went away) the run in progress is killed.
class Inbox {
 public:
  Inbox() : reader_([this] { loop(); }) { reader_.detach(); }

  // The next request's text; nullopt once stdin has ended.
  std::optional<std::string> next() {
    std::unique_lock lock(mutex_);
    ready_.wait(lock, [this] { return !queue_.empty() || closed_; });
    if (queue_.empty()) return std::nullopt;
    std::string text = std::move(queue_.front());
    queue_.pop_front();
    return text;
  }

  // The stop token of the run in progress (nullptr between runs).
  void bind(std::shared_ptr<StopToken> stop) {
    std::lock_guard lock(mutex_);
    current_ = std::move(stop);
    if (current_ && pending_ != StopToken::Level::none) current_->request(pending_);
    pending_ = StopToken::Level::none;
    if (current_ && closed_) current_->request(StopToken::Level::kill);
  }

 private:
  void loop() {
    sdk::FrameReader reader(true);
    char buf[65536];
    for (;;) {
      ssize_t n = ::read(0, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      std::vector<sdk::Frame> frames;
      try {
        frames = reader.feed(std::string_view(buf, static_cast<std::size_t>(n)));
      } catch (const Error&) {
        break;  // not cordon's framing: nothing more is believed
      }
      std::lock_guard lock(mutex_);
      for (auto& f : frames) {
        if (f.tag == sdk::FrameTag::request) queue_.push_back(std::move(f.payload));
        if (f.tag == sdk::FrameTag::stop) stop(f.payload);
      }
      ready_.notify_all();
    }
    std::lock_guard lock(mutex_);
    closed_ = true;
    if (current_) current_->request(StopToken::Level::kill);
    ready_.notify_all();
  }

  // A stop is for the run in progress, or for the request taken but not yet started; one that
  // comes when neither is there was for a run that has ended already and is dropped.
  void stop(const std::string& level) {
    auto asked = level == "kill" ? StopToken::Level::kill : StopToken::Level::terminate;
    if (current_)
      current_->request(asked);
    else if (!queue_.empty())
      pending_ = std::max(pending_, asked);
  }

  std::mutex mutex_;
  std::condition_variable ready_;
  StopToken::Level pending_ = StopToken::Level::none;
  std::deque<std::string> queue_;
  bool closed_ = false;
  std::shared_ptr<StopToken> current_;
  std::thread reader_;
};

// One request, run; its errors are the result's.
RunOutcome serve_one(const std::string& text, Registry& registry, const Config& config,
                     const ServeArgs& a, std::shared_ptr<StopToken> stop, FramedSink& sink) {
  RunOutcome out;
  try {
    RunInput in;
    in.request_text = text;
    Invocation inv = build_invocation(in);
    inv.stop = std::move(stop);
    apply_config(inv, config, a.runtime);
    out = run_invocation(registry, inv, sink);
  } catch (const ErrorList& e) {
    out.result.error = as_one_error(e);
  } catch (const Error& e) {
    out.result.error = e;
  }
  return out;
}

int serve_main(const ServeArgs& a) {
  if (!a.framed)
    throw Error(code::kBadArgument, "cordon serve speaks one protocol: give --framed",
                "cordon serve --framed (frames of cordon/sdk/frames.hpp on stdin and stdout)");
  Config config;
  auto registry = make_registry(a.runtime, config);
  // Lives as long as the process: its reader thread may still wait on stdin when this returns.
  static Inbox* const inbox = new Inbox;
  FramedSink framed;
  while (auto text = inbox->next()) {
    auto stop = std::make_shared<StopToken>();
    inbox->bind(stop);
    int signal = 0;
    RunOutcome out;
    framed.accepted();
    {
      StopOnSignals signals(stop, true);
      out = serve_one(*text, *registry, config, a, stop, framed);
      signal = signals.received();
    }
    inbox->bind(nullptr);
    framed.finish(run_json(out, CollectSink{}));
    if (signal) return 128 + signal;  // asked to stop: the run ended first, and said so
  }
  return 0;
}

}  // namespace

void register_serve(CLI::App& app) {
  auto args = std::make_shared<ServeArgs>();
  auto* serve = app.add_subcommand(
      "serve", "run JSON requests framed on stdin, one after another, until stdin ends");
  serve
      ->add_flag("--framed", args->framed,
                 "the protocol: requests and stop requests in frames on stdin, output and "
                 "results in frames on stdout (see the README)")
      ->required();
  add_runtime_options(serve, args->runtime);
  serve->callback([args] { run_verb(2, [&] { return serve_main(*args); }); });
}

}  // namespace cordon::cli
