// The host process around the sandbox: a multi-threaded one (the sandbox's child must not depend
// on the state of threads that do not exist in it), one that forks, one that ignores SIGCHLD.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "child_signal.hpp"
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

// Memory shared with a run's sandbox processes is kept for the next run rather than unmapped: the
// page the entrant writes the command's pid to (launch.cpp) and the arena the keeper reads its
// tree from (keeper.cpp). A fork of the process inherits both as shared memory: if parent and
// child both reused them, each could take the other's command for its own, and a keeper could
// build the other's tree (before this test, the arena made 1 to 3 of 25 runs of the fork fail).
TEST_CASE("lifecycle: a process and its fork run commands side by side, each getting its own",
          "[userns][lifecycle]") {
  if (!sandbox_available()) return;
  TempDir ws;
  auto policy = base_policy(ws.path(), "/nonexistent-home");
  std::string failure;  // the last run's error, if any
  auto exit_code = [&](int code) {
    auto plan = make_plan(policy, ws.path(), {"/bin/sh", "-c", "exit " + std::to_string(code)});
    plan.deadline = std::chrono::steady_clock::now() + 20s;
    CaptureSink sink;
    auto r = backend().run(plan, sink);
    if (r.error) failure = r.error->render();
    return r.error || r.timed_out ? -1 : r.exit_code;
  };
  REQUIRE(exit_code(3) == 3);  // this thread's launch memory exists before the fork
  constexpr int kRuns = 25;
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    int wrong = 0;
    for (int i = 0; i < kRuns; ++i) wrong += exit_code(4) != 4;
    ::_exit(wrong);
  }
  int wrong = 0;
  for (int i = 0; i < kRuns; ++i) wrong += exit_code(3) != 3;
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  INFO(failure);
  CHECK(wrong == 0);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

// A program embedding cordon may ignore SIGCHLD (SIG_IGN) or set SA_NOCLDWAIT: the kernel then
// reaps the sandbox's processes itself, and the command's status is lost. The run is refused,
// before anything starts, instead of waiting forever for a status that never comes (it spun at
// full CPU past its deadline before) or reporting one it never saw; with SIGCHLD's default
// action back, the same run works.
TEST_CASE("lifecycle: a host that has SIGCHLD ignored gets a refusal, not a hang",
          "[userns][lifecycle]") {
  if (!sandbox_available()) return;
  TempDir ws;
  auto policy = base_policy(ws.path(), "/nonexistent-home");
  auto run_with = [&](const struct sigaction& chld) {
    return cordon::testing::with_child_action(chld, [&] {
      auto plan = make_plan(policy, ws.path(), {"/bin/sh", "-c", "sleep 0.2; exit 5"});
      plan.deadline = std::chrono::steady_clock::now() + 20s;
      CaptureSink sink;
      return backend().run(plan, sink);
    });
  };
  using cordon::testing::child_action;
  for (const auto& refused : {child_action(SIG_IGN, 0), child_action(SIG_DFL, SA_NOCLDWAIT)}) {
    auto r = run_with(refused);
    REQUIRE(r.error);
    CHECK(r.error->code() == "CRD1002");
    CHECK(r.error->message().find("SIGCHLD") != std::string::npos);
    CHECK(r.exit_code == -1);
  }
  auto r = run_with(child_action(SIG_DFL, 0));
  INFO((r.error ? r.error->render() : std::string()));
  CHECK_FALSE(r.error);
  CHECK(r.exit_code == 5);
}
