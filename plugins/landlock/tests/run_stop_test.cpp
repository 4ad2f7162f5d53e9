// Stop requests (`cordon job stop`, Ctrl-C) against the moment they arrive: one made while the
// sandbox is still being set up must not be lost. The init passes SIGTERM to the command only
// once it has one; cordon holds a graceful stop back until the init says so.
#include <cordon/sdk/stop_token.hpp>

#include <signal.h>

#include <csignal>
#include <string>

#include "support.hpp"

using namespace cordon;
using namespace cordon::landlock::test;
using namespace std::chrono_literals;

namespace {

// A command that answers SIGTERM with exit 7 and otherwise runs until the deadline.
RunResult run_stopped_at_once(StopToken::Level level, CaptureSink& sink) {
  TempDir ws;
  auto plan = make_plan(base_policy(ws.path(), "/nonexistent-home"), ws.path(),
                        {"/bin/sh", "-c", "trap 'exit 7' TERM; while :; do sleep 0.05; done"});
  plan.deadline = std::chrono::steady_clock::now() + 10s;
  plan.stop = std::make_shared<StopToken>();
  plan.stop->request(level);  // before the sandbox exists
  return backend().run(plan, sink);
}

}  // namespace

TEST_CASE("stop: a graceful stop asked before the command starts reaches the command",
          "[userns][lifecycle]") {
  if (!sandbox_available()) return;
  for (int i = 0; i < 5; ++i) {
    CaptureSink sink;
    auto r = run_stopped_at_once(StopToken::Level::terminate, sink);
    INFO("run " << i << ": " << (r.error ? r.error->render() : sink.err));
    REQUIRE_FALSE(r.error);
    CHECK_FALSE(r.timed_out);
    // SIGTERM reached the shell: before its trap was set (signal 15) or after (exit 7).
    CHECK((r.signal == SIGTERM || (r.signal == 0 && r.exit_code == 7)));
  }
}

TEST_CASE("stop: a kill asked before the command starts ends the run at once",
          "[userns][lifecycle]") {
  if (!sandbox_available()) return;
  CaptureSink sink;
  auto r = run_stopped_at_once(StopToken::Level::kill, sink);
  REQUIRE_FALSE(r.error);
  CHECK_FALSE(r.timed_out);
  CHECK(r.signal == SIGKILL);
}

namespace {

// The SigCgt (caught) or SigIgn (ignored) mask in a /proc/<pid>/status text; `nth` counts
// from 0 when the text holds several processes' status.
unsigned long long signal_mask(const std::string& status, const std::string& field, int nth) {
  std::size_t at = 0;
  for (int i = 0; i <= nth; ++i) {
    at = status.find(field + ":", at);
    if (at == std::string::npos) return ~0ull;
    at += field.size() + 1;
  }
  return std::stoull(status.substr(at), nullptr, 16);
}

}  // namespace

TEST_CASE("signals: cordon's handlers and ignored signals reach neither the keeper nor the command",
          "[userns][lifecycle]") {
  if (!sandbox_available()) return;
  struct sigaction caught {
  }, ignored{}, old_usr1{}, old_usr2{}, old_rtmax{};
  caught.sa_handler = [](int) {};
  ignored.sa_handler = SIG_IGN;
  ::sigaction(SIGUSR1, &caught, &old_usr1);
  ::sigaction(SIGUSR2, &ignored, &old_usr2);
  ::sigaction(SIGRTMAX, &ignored, &old_rtmax);  // the mask's top bit
  TempDir ws;
  // The sandbox's pid 1 is the keeper; /proc/self is cat, as the command's process made it.
  auto plan = make_plan(base_policy(ws.path(), "/nonexistent-home"), ws.path(),
                        {"/bin/cat", "/proc/1/status", "/proc/self/status"});
  CaptureSink sink;
  auto r = backend().run(plan, sink);
  ::sigaction(SIGUSR1, &old_usr1, nullptr);
  ::sigaction(SIGUSR2, &old_usr2, nullptr);
  ::sigaction(SIGRTMAX, &old_rtmax, nullptr);
  INFO(sink.out << sink.err);
  REQUIRE_FALSE(r.error);
  REQUIRE(r.exit_code == 0);
  auto bit = [](int sig) { return 1ull << (sig - 1); };
  // The keeper catches SIGCHLD (to reap) and SIGTERM (to pass it on), nothing of cordon's.
  CHECK(signal_mask(sink.out, "SigCgt", 0) == (bit(SIGCHLD) | bit(SIGTERM)));
  // The command starts with every signal at its default action.
  CHECK(signal_mask(sink.out, "SigCgt", 1) == 0);
  CHECK(signal_mask(sink.out, "SigIgn", 1) == 0);
}
