// A host that uses threads: the sandbox is cloned from a multi-threaded process, and its child
// must not depend on the state of threads that do not exist in it.
#include <atomic>
#include <chrono>
#include <thread>

#include "support.hpp"

using namespace cordon;
using namespace cordon::landlock::test;
using namespace std::chrono_literals;

TEST_CASE("lifecycle: runs from a process that keeps creating threads never hang",
          "[userns][lifecycle]") {
  if (!sandbox_available()) return;
  TempDir ws;
  auto policy = base_policy(ws.path(), "/nonexistent-home");
  // Threads are born and die all the time, so some clone of the sandbox happens while one is
  // half-created — the moment at which glibc's identity calls would wait for it forever.
  std::atomic<bool> stop{false};
  std::thread churn([&] {
    while (!stop) std::thread([] {}).join();
  });
  int ok = 0, timed_out = 0;
  for (int i = 0; i < 30; ++i) {
    auto plan = make_plan(policy, ws.path(), {"/bin/true"});
    plan.deadline = std::chrono::steady_clock::now() + 10s;
    CaptureSink sink;
    auto r = backend().run(plan, sink);
    if (r.timed_out) ++timed_out;
    if (!r.error && r.exit_code == 0 && !r.timed_out) ++ok;
  }
  stop = true;
  churn.join();
  CHECK(timed_out == 0);
  CHECK(ok == 30);
}
