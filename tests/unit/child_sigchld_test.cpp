// A process that has SIGCHLD ignored (SIG_IGN, kept across execve) or set SA_NOCLDWAIT cannot
// wait for its children: the kernel reaps them as they end, and their exit status is lost. The
// toolkit refuses such a run before it starts anything (CRD1002, naming SIGCHLD) instead of
// reporting a status it never saw; with SIGCHLD's default action the same run reports its
// command's status.
#include <signal.h>
#include <catch2/catch.hpp>
#include <cordon/sdk/child.hpp>

#include <string>

#include "child_signal.hpp"
#include "runtime_test_support.hpp"

using namespace cordon;

namespace {

using cordon::testing::child_action;

// `argv` run through the toolkit while SIGCHLD is `chld`.
RunResult run_with(const struct sigaction& chld, std::vector<std::string> argv) {
  Plan plan;
  plan.argv = std::move(argv);
  plan.workspace = "/";
  plan.env = {{"PATH", "/usr/bin:/bin"}};
  return cordon::testing::with_child_action(chld, [&] {
    cordon::test::Collect sink;
    return sdk::child_result(sdk::run_child(sdk::child_spec(plan, "/"), sink), plan);
  });
}

}  // namespace

TEST_CASE("sdk: with SIGCHLD ignored a run is refused, CRD1002; with its default it runs",
          "[sdk]") {
  const std::vector<std::string> argv = {"/bin/sh", "-c", "sleep 0.1; exit 6"};
  for (const auto& refused : {child_action(SIG_IGN, 0), child_action(SIG_DFL, SA_NOCLDWAIT)}) {
    auto reason =
        cordon::testing::with_child_action(refused, [] { return sdk::children_not_waitable(); });
    REQUIRE(reason);
    CHECK(reason->code() == "CRD1002");
    RunResult r = run_with(refused, argv);
    REQUIRE(r.error);
    CHECK(r.error->code() == "CRD1002");
    CHECK(r.error->message().find("SIGCHLD") != std::string::npos);
    CHECK(r.exit_code == -1);
  }
  CHECK_FALSE(sdk::children_not_waitable());
  RunResult r = run_with(child_action(SIG_DFL, 0), argv);
  INFO((r.error ? r.error->render() : std::string()));
  CHECK_FALSE(r.error);
  CHECK(r.exit_code == 6);
}
