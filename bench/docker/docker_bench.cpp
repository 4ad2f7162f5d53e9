// The docker backend, measured: one-shot `cordon run` against `docker run --rm`, and a run in
// a warm pool container through the C++ API and through `cordon mcp`. Prints medians and
// ratios; asserts nothing.
//
// CORDON_TEST_IMAGE   the image (default cordon-test/busybox:2, made by scripts/docker-image)
// CORDON_DOCKER_CLI   the docker client (default /usr/bin/docker)
// CORDON_BENCH_RUNS   runs per measurement (default 9)
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "docker_backend.hpp"
#include "mcp_client.hpp"

namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double time_command(const std::string& cmd) {
  auto t = Clock::now();
  int rc = std::system((cmd + " >/dev/null 2>&1").c_str());
  double ms = ms_since(t);
  if (rc != 0) std::fprintf(stderr, "bench: '%s' failed (%d)\n", cmd.c_str(), rc);
  return ms;
}

class NullSink final : public cordon::OutputSink {
 public:
  void write(cordon::Stream, std::string_view) override {}
};

cordon::Plan true_plan(const std::string& ws, const std::string& image, int pool) {
  cordon::Plan plan;
  plan.policy.filesystem.write = {ws};
  plan.requirements = cordon::derive_requirements(plan.policy);
  plan.argv = {"/bin/true"};
  plan.workspace = ws;
  plan.env = {{"PATH", "/usr/local/bin:/usr/bin:/bin"}};
  plan.settings = boost::json::object{{"image", image}};
  if (pool) plan.settings["pool"] = pool;
  return plan;
}

bool pooled(const cordon::RunResult& r) {
  return std::find(r.notes.begin(), r.notes.end(), "ran in a warm pool container") != r.notes.end();
}

}  // namespace

int main() {
  std::string image = env_or("CORDON_TEST_IMAGE", "cordon-test/busybox:2");
  std::string docker = env_or("CORDON_DOCKER_CLI", "/usr/bin/docker");
  int runs = std::max(3, std::atoi(env_or("CORDON_BENCH_RUNS", "9").c_str()));
  fs::path ws = fs::path("/var/tmp") / ("cordon-bench-docker-" + std::to_string(::getpid()));
  fs::create_directories(ws);
  std::ofstream(ws / "config.toml") << "[backends.docker]\nimage = \"" << image << "\"\n";
  std::ofstream(ws / "pool.toml") << "[backends.docker]\nimage = \"" << image << "\"\npool = 2\n";
  // The standard preset without su: the test image's busybox provides su, and a multi-call
  // program that provides a blocked applet is masked (its /bin/true with it).
  std::ofstream(ws / "policy.toml") << "version = 1\n[policy]\nextends = \"standard\"\n"
                                       "[process]\nblocked_commands = [\"sudo\"]\n";
  auto cordon_with = [&](const char* config) {
    return std::string(CORDON_CLI) + " run --plugin-dir " + CORDON_PLUGIN_DIR +
           " --backend docker --config " + (ws / config).string() + " --policy " +
           (ws / "policy.toml").string() + " --workspace " + ws.string() + " -- /bin/true";
  };
  std::string cordon = cordon_with("config.toml");
  std::string cordon_pool = cordon_with("pool.toml");
  std::string plain = docker + " run --rm --network none " + image + " /bin/true";

  std::vector<double> cli, cli_pool, ref;
  time_command(cordon);  // warm both paths once (image layers, exec-block cache)
  time_command(plain);
  for (int i = 0; i < runs; ++i) {
    cli.push_back(time_command(cordon));
    cli_pool.push_back(time_command(cordon_pool));
    ref.push_back(time_command(plain));
  }
  std::printf("one-shot, %d runs each (median):\n", runs);
  std::printf("  docker run --rm --network none   %7.1f ms\n", median(ref));
  std::printf("  cordon run --backend docker      %7.1f ms   ratio %.2f (cordon / docker)\n",
              median(cli), median(cli) / median(ref));
  // A one-shot process cannot use a pool: pool = N must cost it nothing.
  std::printf("  cordon run, pool = 2             %7.1f ms   ratio %.2f\n", median(cli_pool),
              median(cli_pool) / median(ref));

  cordon::docker::DockerBackend backend(cordon::BackendContext{"docker", nullptr, {}});
  NullSink sink;
  std::vector<double> api, warm;
  for (int i = 0; i < runs; ++i) {
    auto t = Clock::now();
    backend.run(true_plan(ws.string(), image, 0), sink);
    api.push_back(ms_since(t));
  }
  // Each measured run finds a ready container: the pool refills between runs.
  for (int i = 0, tries = 0; static_cast<int>(warm.size()) < runs && tries < runs * 20; ++tries) {
    auto t = Clock::now();
    auto r = backend.run(true_plan(ws.string(), image, 2), sink);
    double ms = ms_since(t);
    if (pooled(r)) warm.push_back(ms);
    std::this_thread::sleep_for(std::chrono::milliseconds(pooled(r) ? 900 : 600));
    ++i;
  }
  std::printf("through the C++ API, %d runs each (median):\n", runs);
  std::printf("  one-shot container               %7.1f ms   ratio %.2f\n", median(api),
              median(api) / median(ref));
  std::printf(
      "  warm pool (pool = 2)             %7.1f ms   ratio %.2f, %.1fx faster than docker run\n",
      median(warm), median(warm) / median(ref), median(ref) / median(warm));
  // The same warm pool through the agent server: one long-lived `cordon mcp` keeps it.
  std::vector<double> served;
  {
    cordon::bench::McpServer server(
        CORDON_CLI, {"--plugin-dir", CORDON_PLUGIN_DIR, "--backend", "docker", "--config",
                     (ws / "pool.toml").string(), "--policy", (ws / "policy.toml").string(),
                     "--workspace", ws.string()});
    server.calls(1);  // the probe, and the pool's first fill
    for (int i = 0, tries = 0; static_cast<int>(served.size()) < runs && tries < runs * 20;
         ++tries, ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(900));  // the pool refills
      auto t = Clock::now();
      auto r = server.calls(1);
      double ms = ms_since(t);
      const auto* notes = r.if_contains("notes");
      bool warm_run = false;
      if (notes && notes->is_array())
        for (const auto& n : notes->as_array())
          warm_run = warm_run || (n.is_string() && n.as_string() == "ran in a warm pool container");
      if (warm_run) served.push_back(ms);
    }
  }
  std::printf("through cordon mcp, %d calls (median):\n", runs);
  std::printf(
      "  execute_command, pool = 2        %7.1f ms   ratio %.2f, %.1fx faster than docker run\n",
      median(served), median(served) / median(ref), median(ref) / median(served));
  std::error_code ec;
  fs::remove_all(ws, ec);
  return 0;
}
