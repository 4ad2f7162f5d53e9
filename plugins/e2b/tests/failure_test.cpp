// Every way a run can fail leaves no sandbox behind: creation fails, Start fails, the stream is
// cut, cordon itself is killed (then `cordon gc` finds it). The API key is never printed.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "support.hpp"

using namespace cordon;
using namespace cordon::e2b::test;
using cordon::testing::TempDir;
namespace json = boost::json;

namespace {

struct Faults {
  explicit Faults(const json::object& f) { set_faults(f); }
  ~Faults() { set_faults({}); }
};

}  // namespace

TEST_CASE("failures: a create the service refuses is an error, and nothing is left") {
  if (!ready()) return;
  reset();
  TempDir ws("cordon-e2b-ws-", ::geteuid());
  Plan plan = make_plan(basic_policy(), {"true"}, ws.path().string());
  auto backend = make_backend();
  backend->probe_for(plan.settings);  // the probe's own sandbox is not the one failing
  Faults f(json::object{{"create_status", 500}});
  CaptureSink sink;
  RunResult r = backend->run(plan, sink);
  CHECK(code_of(r) == "CRD1005");
  CHECK(alive_sandboxes().empty());
}

TEST_CASE("failures: a Start envd refuses, and a stream cut short, kill the sandbox") {
  if (!ready()) return;
  TempDir ws("cordon-e2b-ws-", ::geteuid());
  auto backend = make_backend();
  Plan plan = make_plan(basic_policy(), {"sh", "-c", "echo a; sleep 2; echo b; sleep 300"},
                        ws.path().string(), json::object{{"upload", false}});
  backend->probe_for(plan.settings);
  {
    Faults f(json::object{{"start_status", 503}});
    CaptureSink sink;
    RunResult r = backend->run(plan, sink);
    CHECK_FALSE(code_of(r).empty());
    CHECK(no_sandbox_within(std::chrono::seconds(5)));
  }
  {
    Faults f(json::object{{"cut_stream_after_events", 2}});
    CaptureSink sink;
    RunResult r = backend->run(plan, sink);
    CHECK(code_of(r) == "CRD1005");
    CHECK(std::string(r.error->what()).find("broke off") != std::string::npos);
    CHECK(no_sandbox_within(std::chrono::seconds(5)));
    CHECK(processes_alive() == 0);
  }
  CaptureSink sink;  // and without a fault the same plan runs
  Plan quick = plan;
  quick.argv = {"echo", "fine"};
  CHECK(backend->run(quick, sink).exit_code == 0);
  CHECK(sink.out == "fine\n");
}

TEST_CASE("failures: a key the service refuses is CRD1010 and never printed") {
  if (!ready()) return;
  TempDir dir("cordon-e2b-cli-", ::geteuid());
  std::string config = write_config(dir.path().string());
  std::string policy = write_policy(dir.path().string());
  std::string good = key();
  ::setenv("CORDON_E2B_TEST_KEY", "wrong-key-4c1d", 1);
  Cli bad = cli({"run", "--config", config, "--backend", "e2b", "--policy", policy, "--workspace",
                 dir.path().string(), "--", "true"});
  ::setenv("CORDON_E2B_TEST_KEY", good.c_str(), 1);
  CHECK(bad.status != 0);
  CHECK(bad.err.find("CRD1010") != std::string::npos);
  CHECK(bad.err.find("wrong-key-4c1d") == std::string::npos);
  ::unsetenv("CORDON_E2B_TEST_KEY");
  Cli missing = cli({"run", "--config", config, "--backend", "e2b", "--policy", policy,
                     "--workspace", dir.path().string(), "--", "true"});
  ::setenv("CORDON_E2B_TEST_KEY", good.c_str(), 1);
  CHECK(missing.err.find("CORDON_E2B_TEST_KEY is not set") != std::string::npos);
  Cli ok = cli({"run", "--config", config, "--backend", "e2b", "--policy", policy, "--workspace",
                dir.path().string(), "--verbose", "--", "echo", "hello"});
  CHECK(ok.status == 0);
  CHECK(ok.out == "hello\n");
  CHECK(ok.out.find(good) == std::string::npos);
  CHECK(ok.err.find(good) == std::string::npos);
}

TEST_CASE("failures: a killed cordon's sandbox is found by cordon gc, a live one's is not") {
  if (!ready()) return;
  reset();
  TempDir dir("cordon-e2b-cli-", ::geteuid());
  std::string config = write_config(dir.path().string());
  std::string policy = write_policy(dir.path().string());
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::execl(CORDON_CLI, CORDON_CLI, "run", "--config", config.c_str(), "--backend", "e2b",
            "--policy", policy.c_str(), "--workspace", dir.path().c_str(), "--", "sleep", "300",
            nullptr);
    ::_exit(127);
  }
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  // The run's command itself, in the run's own sandbox (not the probe's, which carries
  // cordon.purpose = probe). Any live process would not do: the run's set-up (the workspace's
  // extraction, as root) runs there first and is gone before the command starts.
  auto run_sandbox_busy = [] {
    json::object st = state();
    for (const auto& sb : st["sandboxes"].as_array()) {
      if (sb.as_object().at("metadata").as_object().contains("cordon.purpose")) continue;
      for (const auto& command : sb.as_object().at("commands").as_array())
        if (command.as_string().starts_with("sleep 300")) return true;
    }
    return false;
  };
  while (!run_sandbox_busy() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  REQUIRE(run_sandbox_busy());
  Cli live = cli({"gc", "--backend", "e2b", "--config", config});
  CHECK(live.status == 0);
  CHECK(alive_sandboxes().size() == 1);  // its cordon still runs: not garbage
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  CHECK(alive_sandboxes().size() == 1);  // leaked until collected
  Cli gc = cli({"gc", "--backend", "e2b", "--config", config});
  INFO(gc.out << gc.err);
  CHECK(gc.status == 0);
  CHECK((gc.out + gc.err).find("is gone") != std::string::npos);
  CHECK(alive_sandboxes().empty());
}

TEST_CASE("pool: a run takes a sandbox made ahead, and the pool dies with its backend") {
  if (!ready()) return;
  reset();
  TempDir ws("cordon-e2b-ws-", ::geteuid());
  {
    auto backend = make_backend();
    Plan plan = make_plan(basic_policy(), {"true"}, ws.path().string(), json::object{{"pool", 2}});
    CaptureSink first;
    RunResult r1 = backend->run(plan, first);
    CHECK(r1.exit_code == 0);
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (alive_sandboxes().size() < 2 && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    REQUIRE(alive_sandboxes().size() == 2);
    CaptureSink second;
    RunResult r2 = backend->run(plan, second);
    CHECK(r2.exit_code == 0);
    bool pooled = false;
    for (const auto& n : r2.notes) pooled = pooled || n.find("from the pool") != std::string::npos;
    CHECK(pooled);
  }
  CHECK(no_sandbox_within(std::chrono::seconds(10)));
}

TEST_CASE("probe: the key, the template and the canary, or the reason") {
  if (!ready()) return;
  auto backend = make_backend();
  ProbeResult good = backend->probe_for(settings());
  CHECK(good.available);
  CHECK(good.proves("net.deny"));
  CHECK(good.proves("identity.unprivileged"));
  CHECK(good.proves("limit.files"));
  CHECK_FALSE(good.proves("limit.memory"));
  CHECK(good.evidence("limit.memory").find("MiB") != std::string::npos);
  ProbeResult missing = backend->probe_for(settings(json::object{{"template", "no-such"}}));
  CHECK_FALSE(missing.available);
  CHECK(missing.reason.find("no template 'no-such'") != std::string::npos);
  ProbeResult nokey =
      backend->probe_for(settings(json::object{{"api_key_env", "CORDON_E2B_NONE"}}));
  CHECK_FALSE(nokey.available);
  CHECK(nokey.reason.find("CORDON_E2B_NONE is not set") != std::string::npos);
}

TEST_CASE("probe cache: a second cordon process reuses the canary's answer, unless told not to") {
  if (!ready()) return;
  TempDir dir("cordon-e2b-cli-", ::geteuid());
  std::string config = write_config(dir.path().string(), "lease = 61\n");  // an entry of its own
  std::string policy = write_policy(dir.path().string());
  auto creates = [] {
    int n = 0;
    json::object st = state();
    for (const auto& item : st["requests"].as_array())
      n += item.as_object().at("method") == "POST" && item.as_object().at("path") == "/sandboxes";
    return n;
  };
  std::vector<std::string> run = {"run",      "--config", config,        "--backend",         "e2b",
                                  "--policy", policy,     "--workspace", dir.path().string(), "--",
                                  "true"};
  reset();
  REQUIRE(cli(run).status == 0);
  REQUIRE(cli(run).status == 0);
  int cached = creates();
  ::setenv("CORDON_PROBE_CACHE", "off", 1);
  reset();
  REQUIRE(cli(run).status == 0);
  REQUIRE(cli(run).status == 0);
  ::unsetenv("CORDON_PROBE_CACHE");
  CHECK(creates() == 4);  // a probe's sandbox and a run's, each time
  CHECK(cached <= 3);     // the second process probed nothing (the first may have found an entry)
}
