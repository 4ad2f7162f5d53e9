// The warm pool where it cannot pay: a one-shot process. A body run once warms nothing (so a
// `cordon run` with pool = N makes only its own container), and a backend that goes away removes
// the containers it warmed.
#include <ctime>
#include <fstream>
#include <thread>

#include "api.hpp"
#include "process.hpp"
#include "support.hpp"

using namespace cordon;
using namespace cordon::docker;
using namespace cordon::docker::test;
using namespace std::chrono_literals;

namespace {

// Names of the containers the daemon created for process `pid` between `since` and now.
std::vector<std::string> created_by(long pid, std::time_t since) {
  std::this_thread::sleep_for(1100ms);  // `until` is whole seconds: let this one pass
  std::string filters = R"({"type":["container"],"event":["create"],"label":["cordon.pid=)" +
                        std::to_string(pid) + R"("]})";
  Response r = http_request(test_endpoint(), "GET",
                            "/events?since=" + std::to_string(since - 1) +
                                "&until=" + std::to_string(std::time(nullptr)) +
                                "&filters=" + url_encode(filters));
  REQUIRE(r.status == 200);
  std::vector<std::string> names;
  for (std::size_t at = 0; (at = r.body.find("\"name\":\"", at)) != std::string::npos;) {
    at += 8;
    names.push_back(r.body.substr(at, r.body.find('"', at) - at));
  }
  return names;
}

std::size_t pool_containers(const std::vector<std::string>& names) {
  std::size_t n = 0;
  for (const auto& name : names) n += name.rfind("cordon-pool-", 0) == 0;
  return n;
}

}  // namespace

TEST_CASE("pool: a body run once warms nothing", "[docker][pool]") {
  if (!docker_ready()) return;
  TempDir ws;
  auto plan = make_plan(base_policy(ws.path()), ws.path(), {"/bin/true"});
  plan.settings["pool"] = 2;
  {
    DockerBackend b(BackendContext{"docker", nullptr, "/var/tmp/cordon-docker-test"});
    CaptureSink sink;
    REQUIRE(b.run(plan, sink).exit_code == 0);
    std::this_thread::sleep_for(1500ms);  // long enough to have started two
    CHECK(our_containers().empty());
    // A second run of the body: from now on the pool keeps two ready.
    REQUIRE(b.run(plan, sink).exit_code == 0);
    for (int i = 0; i < 100 && our_containers().size() < 2; ++i) std::this_thread::sleep_for(100ms);
    CHECK(our_containers().size() == 2);
  }
  // Gone with the backend: the two it warmed and never used are removed.
  CHECK(our_containers().empty());
}

TEST_CASE("pool: 'cordon run' with pool = 2 makes only its own container and leaves none",
          "[docker][pool][cli]") {
  if (!docker_ready()) return;
  TempDir ws;
  std::string config = ws / "config.toml";
  std::ofstream(config) << "[backends.docker]\nimage = \"" << test_image() << "\"\npool = 2\n"
                        << (std::getenv("CORDON_TEST_DOCKER_SOCKET")
                                ? "socket = \"" +
                                      std::string(std::getenv("CORDON_TEST_DOCKER_SOCKET")) + "\"\n"
                                : std::string());
  escape::SpawnOptions o;
  o.argv = {CORDON_CLI, "run",      "--backend",    "docker",      "--config",
            config,     "--policy", cli_policy(ws), "--workspace", ws.path().string(),
            "--",       "/bin/sh",  "-c",           "echo ran"};
  std::time_t since = std::time(nullptr);
  escape::Process cli(o);
  long pid = cli.pid();
  auto ended = cli.wait();
  INFO(ended.out << ended.err);
  CHECK(ended.status == 0);
  CHECK(ended.out == "ran\n");
  auto names = created_by(pid, since);
  INFO(names.size() << " container(s) created");
  CHECK(pool_containers(names) == 0);  // nothing warmed for a run that cannot use it
  CHECK(names.size() >= 1);            // its own container (and at most the exec-block stat)
  std::string filter = R"({"label":["cordon.pid=)" + std::to_string(pid) + R"("]})";
  Response left =
      http_request(test_endpoint(), "GET", "/containers/json?all=1&filters=" + url_encode(filter));
  CHECK(left.body == "[]\n");
}
