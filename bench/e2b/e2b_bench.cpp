// N runs of /bin/true through the e2b backend (one backend object, as the C++ API and a
// long-lived host use it) against the local E2B stand-in, beside the bare requests a run must
// make — create a sandbox, Start the command and read its stream to the end, delete the sandbox
// — with nothing of cordon's around them. Per run: wall time, the time spent waiting on the
// service, cordon's own time (the rest), and this process's CPU time; then the same with
// pool = 2, where no run waits for a sandbox to be created.
//   cordon-bench-e2b FIXTURE_DIR [N]   FIXTURE_DIR: made by mock-fixture start
#include <sys/resource.h>
#include <cordon/sdk/requirements.hpp>

#include <boost/json.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

#include "api.hpp"
#include "e2b_backend.hpp"
#include "envd.hpp"
#include "http.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Cost {
  double wall_ms = 0, service_ms = 0, cpu_ms = 0;
};

double cpu_ms() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
         (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
}

Cost measure(int n, const std::function<bool()>& once) {
  double cpu0 = cpu_ms();
  auto waited0 = cordon::e2b::request_nanoseconds();
  auto t0 = Clock::now();
  for (int i = 0; i < n; ++i)
    if (!once()) {
      std::fprintf(stderr, "bench-e2b: a run failed\n");
      std::exit(1);
    }
  double wall = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  double service = static_cast<double>(cordon::e2b::request_nanoseconds() - waited0) / 1e6;
  return {wall / n, service / n, (cpu_ms() - cpu0) / n};
}

struct Sink final : cordon::OutputSink {
  void write(cordon::Stream, std::string_view) override {}
};

std::string line_of(const std::string& file) {
  std::ifstream in(file);
  std::string s;
  std::getline(in, s);
  return s;
}

void print(const char* what, const Cost& c, const Cost& base) {
  std::printf(
      "%-30s %7.2f ms  %5.2f of bare | service %7.2f ms | cordon's own %6.2f ms | CPU %6.2f ms\n",
      what, c.wall_ms, c.wall_ms / base.wall_ms, c.service_ms, c.wall_ms - c.service_ms, c.cpu_ms);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: cordon-bench-e2b FIXTURE_DIR [N]\n");
    return 2;
  }
  std::string dir = argv[1];
  int n = argc > 2 ? std::atoi(argv[2]) : 20;
  std::string url = "http://127.0.0.1:" + line_of(dir + "/port");
  ::setenv("CORDON_E2B_BENCH_KEY", line_of(dir + "/key").c_str(), 1);
  boost::json::object settings{{"api_url", url},
                               {"envd_url", url},
                               {"api_key_env", "CORDON_E2B_BENCH_KEY"},
                               {"upload", false}};
  auto s = cordon::e2b::settings_of(settings);

  cordon::e2b::Api api(s, line_of(dir + "/key"));
  auto bare = [&] {
    auto sb = api.create({60, false, {}});
    cordon::e2b::StartSpec spec{"user", "/bin/true", {}, {}, std::nullopt, false, std::nullopt};
    auto c = cordon::e2b::Envd(s, sb).run(spec, std::chrono::seconds(30));
    api.kill(sb.id);
    return !c.outcome.error;
  };

  std::filesystem::path ws = std::filesystem::temp_directory_path() / "cordon-bench-e2b-ws";
  std::filesystem::create_directories(ws);
  cordon::Policy policy;
  policy.limits.timeout = std::chrono::seconds(30);
  policy.filesystem.write = {ws.string()};
  auto plan_for = [&](boost::json::object extra) {
    cordon::Plan plan;
    plan.policy = policy;
    plan.requirements = cordon::derive_requirements(policy);
    plan.argv = {"/bin/true"};
    plan.workspace = ws;
    plan.env = {{"PATH", "/usr/bin:/bin"}};
    plan.settings = settings;
    for (const auto& kv : extra) plan.settings[kv.key()] = kv.value();
    return plan;
  };
  auto runs = [&](cordon::e2b::E2bBackend& backend, const cordon::Plan& plan) {
    return [&backend, plan] {
      Sink sink;
      auto r = backend.run(plan, sink);
      if (r.error) std::fprintf(stderr, "%s\n", r.error->message().c_str());
      return !r.error && r.exit_code == 0;
    };
  };

  cordon::e2b::E2bBackend plain({"e2b", nullptr, "/var/tmp"});
  cordon::Plan one = plan_for({});
  runs(plain, one)();  // the probe, once per process, is not a run's cost
  bare();
  Cost base = measure(n, bare);
  Cost cordon_cost = measure(n, runs(plain, one));

  cordon::e2b::E2bBackend pooled({"e2b", nullptr, "/var/tmp"});
  cordon::Plan two = plan_for({{"pool", 2}});
  runs(pooled, two)();
  Cost pool_cost{};
  {
    // Each run gets a sandbox made while the previous one ran: the pool refills in the
    // background, between the runs, on a thread whose requests are not counted; its CPU is.
    double cpu0 = cpu_ms();
    auto waited0 = cordon::e2b::request_nanoseconds();
    double wall = 0;
    for (int i = 0; i < n; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));  // lets the pool refill
      auto t0 = Clock::now();
      if (!runs(pooled, two)()) return 1;
      wall += std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    }
    pool_cost = {wall / n,
                 static_cast<double>(cordon::e2b::request_nanoseconds() - waited0) / 1e6 / n,
                 (cpu_ms() - cpu0) / n};
  }

  std::printf("e2b: %d runs of /bin/true against the local E2B stand-in (127.0.0.1), per run\n", n);
  std::printf("%-30s %7.2f ms  (baseline) | service %7.2f ms | CPU %6.2f ms\n",
              "bare requests (create, Start, DELETE)", base.wall_ms, base.service_ms, base.cpu_ms);
  print("cordon, pool = 0", cordon_cost, base);
  print("cordon, pool = 2", pool_cost, base);
  std::printf("(pool = 2: the refill of the pool runs between runs and is not counted)\n");
  return 0;
}
