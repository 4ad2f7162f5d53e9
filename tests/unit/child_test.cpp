// The backend toolkit's supervised child (cordon/sdk/child.hpp), through its public header
// only, as a plugin uses it: the plan becomes a spec, the outcome a result, and exec failures
// keep their codes and statuses. Real processes; the none backend's tests cover the rest.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>
#include <cordon/sdk/child.hpp>
#include <cordon/sdk/seccomp.hpp>
#include <cordon/sdk/testing.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <thread>

#include "runtime_test_support.hpp"

using namespace cordon;
using namespace std::chrono_literals;
using cordon::test::Collect;

namespace {

Plan plan_of(std::vector<std::string> argv) {
  Plan plan;
  plan.argv = std::move(argv);
  plan.workspace = "/";
  plan.env = {{"PATH", "/usr/bin:/bin"}, {"GRANTED", "yes"}};
  return plan;
}

}  // namespace

TEST_CASE("sdk: exec candidates follow PATH unless the program has a slash", "[sdk]") {
  CHECK(sdk::exec_candidates("ls", "/usr/bin:/bin") ==
        std::vector<std::string>{"/usr/bin/ls", "/bin/ls"});
  CHECK(sdk::exec_candidates("./run.sh", "/usr/bin") == std::vector<std::string>{"./run.sh"});
  CHECK(sdk::exec_candidates("x", "/a::/b") == std::vector<std::string>{"/a/x", "./x", "/b/x"});
}

TEST_CASE("sdk: exec failures are CRD5004/127 when nothing is there, else CRD5005/126", "[sdk]") {
  for (int err : {ENOENT, ENOTDIR, ENAMETOOLONG}) {
    CHECK(sdk::exec_failure("x", err).code() == code::kNotFound);
    CHECK(sdk::exec_failure_status(err) == 127);
  }
  CHECK(sdk::exec_failure("x", EACCES).code() == code::kNotExecutable);
  CHECK(sdk::exec_failure_status(EACCES) == 126);
  CHECK(sdk::exec_failure("x", ENOENT, "look in the image").hint() == "look in the image");
}

TEST_CASE("sdk: a child gets exactly the granted environment and the plan's HOME", "[sdk]") {
  Plan plan = plan_of({"env"});
  sdk::ChildSpec spec = sdk::child_spec(plan, "/nonexistent-home");
  CHECK(spec.exec_paths == std::vector<std::string>{"/usr/bin/env", "/bin/env"});
  Collect sink;
  RunResult r = sdk::child_result(sdk::run_child(spec, sink), plan);
  REQUIRE_FALSE(r.error);
  CHECK(r.exit_code == 0);
  CHECK(sink.out.find("GRANTED=yes\n") != std::string::npos);
  CHECK(sink.out.find("HOME=/nonexistent-home\n") != std::string::npos);
  CHECK(sink.out.find("USER=") == std::string::npos);  // not granted, not inherited
}

TEST_CASE("sdk: a missing program is CRD5004 with status 127, a failing one keeps its code",
          "[sdk]") {
  Plan missing = plan_of({"no-such-program-here"});
  Collect sink;
  RunResult r = sdk::child_result(sdk::run_child(sdk::child_spec(missing, "/"), sink), missing);
  REQUIRE(r.error);
  CHECK(r.error->code() == code::kNotFound);
  CHECK(r.exit_code == 127);
  Plan failing = plan_of({"sh", "-c", "exit 7"});
  r = sdk::child_result(sdk::run_child(sdk::child_spec(failing, "/"), sink), failing);
  CHECK_FALSE(r.error);
  CHECK(r.exit_code == 7);
}

TEST_CASE("sdk: the deadline and a stop end the whole tree", "[sdk]") {
  Plan plan = plan_of({"sh", "-c", "sleep 30 & sleep 30"});
  sdk::ChildSpec spec = sdk::child_spec(plan, "/");
  spec.deadline = std::chrono::steady_clock::now() + 300ms;
  spec.grace = 100ms;
  Collect sink;
  auto started = std::chrono::steady_clock::now();
  RunResult r = sdk::child_result(sdk::run_child(spec, sink), plan);
  CHECK(r.timed_out);
  CHECK(std::chrono::steady_clock::now() - started < 10s);

  plan.stop = std::make_shared<StopToken>();
  plan.stop->request(StopToken::Level::kill);  // made before the child exists: not lost
  spec = sdk::child_spec(plan, "/");
  started = std::chrono::steady_clock::now();
  r = sdk::child_result(sdk::run_child(spec, sink), plan);
  CHECK_FALSE(r.timed_out);
  CHECK_FALSE(r.error);  // the supervisor was not killed by the early request
  // A kill implies a terminate: the shell may die of the SIGTERM before the SIGKILL comes.
  CHECK((r.signal == SIGKILL || r.signal == SIGTERM));
  CHECK(std::chrono::steady_clock::now() - started < 10s);
}

TEST_CASE("sdk testing: a marked process that lingers is found, and none is left by a run",
          "[sdk]") {
  namespace t = cordon::sdk::testing;
  // The helper can fail: a marked process of our own is found, by marker and by namespace.
  std::string marker = t::unique_marker();
  std::string env_entry = "MARK=" + marker;
  pid_t pid = ::fork();
  if (pid == 0) {
    char* const argv[] = {const_cast<char*>("sleep"), const_cast<char*>("30"), nullptr};
    char* const envp[] = {env_entry.data(), nullptr};
    ::execve("/bin/sleep", argv, envp);
    ::_exit(127);
  }
  REQUIRE(pid > 0);
  auto found = t::survivors(marker, 0ms);
  for (int i = 0; i < 100 && found.empty(); ++i) {  // until it has executed
    std::this_thread::sleep_for(10ms);
    found = t::processes_marked(marker);
  }
  CHECK(found == std::vector<pid_t>{pid});
  auto members = t::pid_namespace_members(t::pid_namespace_of(::getpid()));
  CHECK(std::find(members.begin(), members.end(), pid) != members.end());
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  CHECK(t::survivors(marker).empty());

  // A run whose command leaves a background process behind ends with nothing marked alive.
  Plan plan = plan_of({"sh", "-c", "sleep 30 & exit 0"});
  plan.env["MARK"] = t::unique_marker();
  Collect sink;
  RunResult r = sdk::child_result(sdk::run_child(sdk::child_spec(plan, "/"), sink), plan);
  CHECK(r.exit_code == 0);
  CHECK(t::survivors(plan.env["MARK"]).empty());
}

TEST_CASE("sdk: a filter in the spec is the command's, and it holds", "[sdk]") {
  // The command forks (a subshell) and reports whether it could.
  Plan plan = plan_of({"sh", "-c", "(true) && echo forked || echo refused"});
  Collect free_sink;
  RunResult r = sdk::child_result(sdk::run_child(sdk::child_spec(plan, "/"), free_sink), plan);
  CHECK(free_sink.out == "forked\n");

  sdk::ChildSpec spec = sdk::child_spec(plan, "/");
  spec.filter = sdk::compile_denials({.no_subprocess = true});
  Collect denied_sink;
  r = sdk::child_result(sdk::run_child(spec, denied_sink), plan);
  REQUIRE_FALSE(r.error);  // the shell itself was executed
  CHECK(denied_sink.out.find("forked") == std::string::npos);
}
