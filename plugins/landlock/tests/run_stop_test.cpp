// Stop requests (`cordon job stop`, Ctrl-C) against the moment they arrive: one made while the
// sandbox is still being set up must not be lost. The init passes SIGTERM to the command only
// once it has one; cordon holds a graceful stop back until the init says so.
#include <cordon/stop_token.hpp>

#include <csignal>

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
