// A cordon killed mid-run leaves its container behind, labelled; `cordon gc` (and the
// next run) removes it. Through the real CLI and the real daemon.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "process.hpp"
#include "support.hpp"

using namespace cordon;
using namespace cordon::docker::test;
using namespace std::chrono_literals;

namespace {

// `docker ps -a -q` of the containers labelled with `label`, through the docker CLI.
std::string containers_labelled(const std::string& label) {
  std::string host;
  if (const char* s = std::getenv("CORDON_TEST_DOCKER_SOCKET"); s && *s)
    host = std::string("-H unix://") + s + " ";
  escape::SpawnOptions o;
  o.argv = {"/bin/sh", "-c", "docker " + host + "ps -a -q --filter label=" + label};
  return escape::run_process(o).out;
}

}  // namespace

TEST_CASE("gc: a killed cordon's container is removed by 'cordon gc --backend docker'",
          "[docker][gc]") {
  if (!docker_ready()) return;
  TempDir ws;
  auto config = cli_config(ws);
  escape::SpawnOptions gc;
  gc.argv = {CORDON_CLI, "gc", "--backend", "docker", "--config", config};
  // A docker run of another test, in parallel, sweeps the containers of dead cordons too; when
  // one does so between the kill and the gc below, the round proves nothing and is run again.
  bool removed_by_gc = false;
  for (int round = 0; round < 3 && !removed_by_gc; ++round) {
    // The command says it runs: before that, a labelled container may be a probe's, or one
    // whose waiter never got its input, and neither is the run's container left behind.
    std::string began = ws / ("began-" + std::to_string(round));
    escape::SpawnOptions o;
    o.argv = {CORDON_CLI,    "run",
              "--backend",   "docker",
              "--config",    config,
              "--policy",    cli_policy(ws),
              "--workspace", ws.path().string(),
              "--",          "/bin/sh",
              "-c",          "touch " + began + "; exec /bin/sleep 60"};
    escape::Process cordon_run(o);
    std::string label = "cordon.pid=" + std::to_string(cordon_run.pid());
    for (int i = 0; i < 300 && ::access(began.c_str(), F_OK) != 0; ++i)
      std::this_thread::sleep_for(100ms);
    REQUIRE(::access(began.c_str(), F_OK) == 0);
    REQUIRE(containers_made_by(cordon_run.pid(), true).size() == 1);  // the run's, running
    std::string left = containers_labelled(label);
    // Killed as a crash would kill it: nothing of cordon's can clean up.
    ::kill(cordon_run.pid(), SIGKILL);
    auto ended = cordon_run.wait();
    CHECK(ended.signal == SIGKILL);
    // Left behind and findable by its label, unless a parallel sweep was quicker.
    if (containers_labelled(label) != left) continue;

    auto collected = escape::run_process(gc);
    INFO(collected.out << collected.err);
    CHECK(collected.status == 0);
    CHECK(containers_labelled(label).empty());
    removed_by_gc = collected.out.find("removed container") != std::string::npos;
  }
  CHECK(removed_by_gc);
  // Nothing more to collect: a second gc says so, through the alias `cordon docker gc`.
  gc.argv = {CORDON_CLI, "docker", "gc", "--config", config};
  auto again = escape::run_process(gc);
  CHECK(again.status == 0);
  CHECK(again.out.find("nothing to remove") != std::string::npos);
}
