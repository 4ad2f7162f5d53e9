// A daemon that goes away mid-run: a fake daemon on a unix socket answers just enough to start
// a run, then drops every connection and stops listening. The run must end with CRD1005, not
// hang. Needs no real daemon.
#include "fake_daemon.hpp"
#include "support.hpp"

using namespace cordon;
using namespace cordon::docker;
using namespace cordon::docker::test;

TEST_CASE("daemon: one that goes away mid-run ends the run with CRD1005, not a hang",
          "[unit][daemon]") {
  TempDir ws;
  std::string socket = ws / "fake.sock";
  FakeDaemon fake(socket, FakeDaemon::Mode::vanish_after_start);
  auto backend = backend_probed_at(socket);
  auto& b = *backend;
  auto plan = make_plan(base_policy(ws.path()), ws.path(), {"/bin/sleep", "60"});
  plan.settings["socket"] = socket;
  CaptureSink sink;
  auto start = std::chrono::steady_clock::now();
  auto r = b.run(plan, sink);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
  REQUIRE(r.error);
  CHECK(r.error->code() == "CRD1005");
  CHECK(r.error->message().find("went away mid-run") != std::string::npos);
}
