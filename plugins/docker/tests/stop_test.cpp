// Stop requests raised while the container is still being made: during create, attach, the exit
// waiter's registration or start. The run ends at once, nothing of the command runs to its end,
// and no container is left.
#include <thread>

#include "fake_daemon.hpp"
#include "support.hpp"

using namespace cordon;
using namespace cordon::docker;
using namespace cordon::docker::test;
using namespace std::chrono_literals;

namespace {

struct Stopped {
  RunResult result;
  std::chrono::milliseconds took{0};
  std::string out;
};

// Runs a long command and raises `level` from another thread `delay` after run() starts.
Stopped run_and_stop(DockerBackend& b, const TempDir& ws, std::chrono::milliseconds delay,
                     StopToken::Level level) {
  auto plan = make_plan(base_policy(ws.path()), ws.path(),
                        {"/bin/sh", "-c", "echo up; sleep 60; echo never"});
  plan.stop = std::make_shared<StopToken>();
  auto token = plan.stop;
  CaptureSink sink;
  auto start = std::chrono::steady_clock::now();
  std::thread stopper([token, delay, level] {
    std::this_thread::sleep_for(delay);
    token->request(level);
  });
  Stopped s;
  s.result = b.run(plan, sink);
  s.took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 start);
  stopper.join();
  s.out = sink.out;
  return s;
}

// How long an undisturbed run of `echo up` takes here (the quickest of three), which bounds
// create + attach + start.
std::chrono::milliseconds quick_run(DockerBackend& b, const TempDir& ws) {
  std::chrono::milliseconds best{60000};
  for (int i = 0; i < 3; ++i) {
    CaptureSink sink;
    auto start = std::chrono::steady_clock::now();
    auto r =
        b.run(make_plan(base_policy(ws.path()), ws.path(), {"/bin/sh", "-c", "echo up"}), sink);
    REQUIRE(r.exit_code == 0);
    best = std::min(best, std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::steady_clock::now() - start));
  }
  return best;
}

}  // namespace

TEST_CASE("stop: a request raised as the run starts ends it before the container runs",
          "[docker][stop]") {
  if (!docker_ready()) return;
  TempDir ws;
  auto& b = backend();
  auto normal = quick_run(b, ws);
  for (auto level : {StopToken::Level::kill, StopToken::Level::terminate}) {
    auto s = run_and_stop(b, ws, 0ms, level);
    INFO("took " << s.took.count() << " ms; a whole run takes " << normal.count() << " ms");
    CHECK(s.result.signal == (level == StopToken::Level::kill ? 9 : 15));
    CHECK_FALSE(s.result.error);
    CHECK(s.out.empty());  // the command never ran
    // Seen before create: a fraction of what create, attach and start take (without the
    // checks between stages, the run went on to start the container, then killed it).
    CHECK(s.took < normal / 3);
    CHECK(our_containers().empty());
  }
}

TEST_CASE("stop: a request at any stage of the making ends the run and leaves no container",
          "[docker][stop]") {
  if (!docker_ready()) return;
  TempDir ws;
  auto& b = backend();
  auto normal = quick_run(b, ws);
  // Spread over the making of the container: each delay lands in another stage.
  for (auto fraction : {0.2, 0.4, 0.6, 0.8}) {
    auto delay = std::chrono::milliseconds(static_cast<long>(normal.count() * fraction));
    auto s = run_and_stop(b, ws, delay, StopToken::Level::kill);
    INFO("stop at " << delay.count() << " ms; ended at " << s.took.count() << " ms; a whole run "
                    << normal.count() << " ms");
    CHECK(s.result.signal == 9);
    CHECK(s.out.find("never") == std::string::npos);
    // The daemon finishes a start it has begun before it kills and removes the container.
    CHECK(s.took < delay + normal + 250ms);
    CHECK(our_containers().empty());
  }
}

TEST_CASE("stop: a request while the daemon holds attach, wait or start ends the run at once",
          "[unit][stop]") {
  using Mode = FakeDaemon::Mode;
  for (auto mode : {Mode::hold_attach, Mode::hold_wait, Mode::hold_start}) {
    TempDir ws;
    std::string socket = ws / "fake.sock";
    FakeDaemon fake(socket, mode);
    auto backend = backend_probed_at(socket);
    auto& b = *backend;
    auto plan = make_plan(base_policy(ws.path()), ws.path(), {"/bin/sleep", "60"});
    plan.settings["socket"] = socket;
    plan.stop = std::make_shared<StopToken>();
    auto token = plan.stop;
    std::thread stopper([token] {
      std::this_thread::sleep_for(300ms);
      token->request(StopToken::Level::kill);
    });
    CaptureSink sink;
    auto start = std::chrono::steady_clock::now();
    auto r = b.run(plan, sink);
    auto took = std::chrono::steady_clock::now() - start;
    stopper.join();
    INFO("mode " << static_cast<int>(mode));
    // Polled every 50 ms; the daemon's own timeouts are 30 s (attach, wait) and 120 s (start).
    CHECK(took < 1s);
    CHECK(r.signal == 9);
    CHECK_FALSE(r.error);
    CHECK(fake.saw("DELETE", "/containers/fakeid"));
    CHECK(fake.saw("POST", "/start") == (mode == Mode::hold_start));
  }
}

TEST_CASE("stop: the deadline passing while the daemon holds start ends the run as timed out",
          "[unit][stop]") {
  TempDir ws;
  std::string socket = ws / "fake.sock";
  FakeDaemon fake(socket, FakeDaemon::Mode::hold_start);
  auto backend = backend_probed_at(socket);
  auto& b = *backend;
  auto plan = make_plan(base_policy(ws.path()), ws.path(), {"/bin/sleep", "60"});
  plan.settings["socket"] = socket;
  plan.deadline = std::chrono::steady_clock::now() + 300ms;
  CaptureSink sink;
  auto start = std::chrono::steady_clock::now();
  auto r = b.run(plan, sink);
  CHECK(std::chrono::steady_clock::now() - start < 1s);
  CHECK(r.timed_out);
  CHECK(r.cli_status() == 124);
  CHECK(fake.saw("DELETE", "/containers/fakeid"));
}
