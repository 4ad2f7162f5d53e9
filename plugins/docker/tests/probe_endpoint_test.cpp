// The daemon a run's settings name is the one whose probe must prove the plan: each daemon's
// kernel and build decide which limits it can enforce, and a daemon without memory limits
// accepts a container's limit and drops it with a warning. Two fake daemons on unix sockets
// stand for a daemon with every limit and one with none. Needs no real daemon.
#include "fake_daemon.hpp"
#include "support.hpp"

using namespace cordon;
using namespace cordon::docker;
using namespace cordon::docker::test;

TEST_CASE(
    "probe: a run on a daemon named by settings is refused when that daemon cannot prove "
    "the policy, before any container is made",
    "[unit][daemon]") {
  TempDir ws;
  std::string full_socket = ws / "full.sock", bare_socket = ws / "bare.sock";
  FakeDaemon full(full_socket, FakeDaemon::Mode::vanish_after_start);
  FakeDaemon bare(bare_socket, FakeDaemon::Mode::vanish_after_start, FakeDaemon::Limits::none);
  auto backend = backend_probed_at(full_socket);
  Policy limited = base_policy(ws.path());
  limited.limits.memory_mb = 256;
  limited.limits.max_processes = 64;
  auto plan = make_plan(limited, ws.path(), {"/bin/true"});
  plan.settings["socket"] = bare_socket;
  CaptureSink sink;

  auto refused = backend->run(plan, sink);
  REQUIRE(refused.error);
  CHECK(refused.error->code() == "CRD1001");
  CHECK(refused.error->message().find(bare_socket) != std::string::npos);
  CHECK(refused.error->message().find("limit.memory") != std::string::npos);
  CHECK(refused.error->message().find("limit.processes") != std::string::npos);
  CHECK_FALSE(bare.saw("POST", "/containers/create"));

  SECTION("the same plan on the probed daemon goes on to make its container") {
    plan.settings["socket"] = full_socket;
    auto r = backend->run(plan, sink);
    CHECK(full.saw("POST", "/containers/create"));
    if (r.error) CHECK(r.error->code() != "CRD1001");
  }
  SECTION("a plan without limits on the named daemon goes on to make its container") {
    auto unlimited = make_plan(base_policy(ws.path()), ws.path(), {"/bin/true"});
    unlimited.settings["socket"] = bare_socket;
    auto r = backend->run(unlimited, sink);
    CHECK(bare.saw("POST", "/containers/create"));
    if (r.error) CHECK(r.error->code() != "CRD1001");
  }
}

TEST_CASE(
    "probe: a run on a daemon named by settings needs no default daemon, and one that does "
    "not answer is CRD1005",
    "[unit][daemon]") {
  TempDir ws;
  std::string named_socket = ws / "named.sock";
  FakeDaemon named(named_socket, FakeDaemon::Mode::vanish_after_start);
  // The default daemon (DOCKER_HOST) answers nowhere: the backend's own probe fails.
  ::setenv("DOCKER_HOST", ("unix://" + (ws / "absent.sock")).c_str(), 1);
  DockerBackend backend(BackendContext{"docker", nullptr, "/var/tmp/cordon-docker-test"});
  bool default_available = backend.probe().available;
  ::unsetenv("DOCKER_HOST");
  REQUIRE_FALSE(default_available);
  Policy limited = base_policy(ws.path());
  limited.limits.memory_mb = 256;
  auto plan = make_plan(limited, ws.path(), {"/bin/true"});
  CaptureSink sink;

  SECTION("the named daemon proves the plan and gets its container") {
    plan.settings["socket"] = named_socket;
    auto r = backend.run(plan, sink);
    CHECK(named.saw("POST", "/containers/create"));
    if (r.error) CHECK(r.error->code() != "CRD1004");
  }
  SECTION("a named daemon that does not answer") {
    std::string silent = ws / "silent.sock";
    plan.settings["socket"] = silent;
    auto r = backend.run(plan, sink);
    REQUIRE(r.error);
    CHECK(r.error->code() == "CRD1005");
    CHECK(r.error->message().find("no daemon answered at " + silent) == 0);
  }
}
