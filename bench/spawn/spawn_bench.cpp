// Measures the start-up cost of a landlock sandbox against bare exec, unshare and bwrap.
//
//   cordon-bench-spawn [--runs N] [--seconds S]   the comparison (run it in the workspace)
//   cordon-bench-spawn --in-process [N]           probe and run costs inside one process,
//                                                 wall and CPU (robust on a busy machine)
//   cordon-bench-spawn --once                     one probe + one run (used by the comparison)
//
// Wall: the commands run in rounds, each round running every command once, so that the
// machine's drifting speed is the same for all; each figure is a command's median wall time
// over N rounds. CPU: the time the whole machine spent per run (from /proc/stat: every process
// and kernel thread, so also the kernel's deferred work such as tearing down a network
// namespace, which no process is charged with), measured over blocks of 20 runs of one command
// whose window opens and closes on a settled machine (machine_cpu.hpp); run it on an
// otherwise idle machine. "C++ API process" is this
// program started with --once: a fresh process that creates the backend, probes it and runs
// /bin/true under the standard policy (what `cordon run` does, minus the CLI's own start-up);
// "run in a warm process" is one run of an already probed backend inside a long-lived process
// (the C++ API), without any process start-up; "a C++ program doing nothing" is the start-up
// every C++ command pays here. "cordon run" is `cordon run --backend landlock -- /bin/true`,
// measured when it works here. "floor" is floor.c: the least any namespaced sandbox costs here
// (a static C program doing namespaces, /proc, Landlock and seccomp, and nothing else).
// Diagnostics: CORDON_BENCH_NO_TOTALS=1 drops the memory and process totals (no cgroup then),
// CORDON_BENCH_NETWORK=1 allows the network (no network namespace), to see what each costs;
// CORDON_BENCH_PROGRAM=PATH runs PATH instead of /bin/true; CORDON_BENCH_GAP_MS=N leaves N ms
// between the warm process's runs (an agent's calls have its thinking between them). Build it
// optimised for meaningful figures.
#include <cordon/policy_loader.hpp>
#include <cordon/sdk/requirements.hpp>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "huge_pages.hpp"
#include "landlock_backend.hpp"
#include "machine_cpu.hpp"
#include "quiet_spawn.hpp"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;
using Command = std::vector<std::string>;

class NullSink final : public cordon::OutputSink {
 public:
  void write(cordon::Stream, std::string_view) override {}
};

// Runs argv with stdout/stderr on /dev/null, in `env` (default: this process's environment);
// returns the exit status or -1.
int run(const Command& cmd, char* const* env = environ) {
  pid_t pid = cordon::bench::start_quiet(cmd, env);
  if (pid < 0) return -1;
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A median wall time and the machine's CPU per run.
struct Cost {
  double wall = 0;
  double cpu = 0;
};

using cordon::bench::settled_busy_ms;

// A command to measure, and whether it runs with the probe cache off.
struct Entry {
  const char* name;
  Command cmd;
  bool probe_cache_off = false;
};

// The median wall time of each entry over `runs` rounds. Each round runs every entry once, so
// that the machine's speed, which drifts by a fifth within minutes here, is the same for all.
std::vector<double> interleaved_walls(const std::vector<Entry>& entries, int runs,
                                      char* const* probe_off_env) {
  std::vector<std::vector<double>> walls(entries.size());
  for (int i = 0; i < runs; ++i) {
    for (std::size_t k = 0; k < entries.size(); ++k) {
      auto start = Clock::now();
      run(entries[k].cmd, entries[k].probe_cache_off ? probe_off_env : environ);
      walls[k].push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    }
  }
  std::vector<double> out;
  for (auto& w : walls) {
    std::sort(w.begin(), w.end());
    out.push_back(w[w.size() / 2]);
  }
  return out;
}

// The machine's CPU per run of each entry, its deferred kernel work included: the kernel tears
// a run's namespaces and cgroups down later, in its own threads, so a window around each run
// alone would count that work with whichever command runs next. Each entry runs in blocks of
// `block`, each measured settled (settled_busy_ms); blocks of all entries alternate, `rounds`
// times.
std::vector<double> settled_cpu(const std::vector<Entry>& entries, int rounds, int block,
                                char* const* probe_off_env) {
  std::vector<double> cpu(entries.size(), 0);
  for (int r = 0; r < rounds; ++r)
    for (std::size_t k = 0; k < entries.size(); ++k)
      cpu[k] += settled_busy_ms([&] {
        for (int i = 0; i < block; ++i)
          run(entries[k].cmd, entries[k].probe_cache_off ? probe_off_env : environ);
      });
  for (auto& c : cpu) c /= rounds * block;
  return cpu;
}

// Wall (interleaved_walls) and CPU (settled_cpu) of each entry.
std::vector<Cost> measure(const std::vector<Entry>& entries, int runs) {
  std::vector<std::string> extra;
  for (char** e = environ; *e; ++e) extra.emplace_back(*e);
  extra.emplace_back("CORDON_PROBE_CACHE=off");
  std::vector<char*> probe_off_env;
  for (auto& e : extra) probe_off_env.push_back(e.data());
  probe_off_env.push_back(nullptr);
  std::vector<double> walls = interleaved_walls(entries, runs, probe_off_env.data());
  int block = 20;
  std::vector<double> cpu =
      settled_cpu(entries, std::max(1, runs / block), block, probe_off_env.data());
  std::vector<Cost> out;
  for (std::size_t k = 0; k < entries.size(); ++k) out.push_back({walls[k], cpu[k]});
  return out;
}

double parallel_rate(const Command& cmd, double seconds) {
  std::atomic<long> done{0};
  auto until = Clock::now() + std::chrono::duration<double>(seconds);
  auto worker = [&] {
    while (Clock::now() < until) {
      run(cmd);
      ++done;
    }
  };
  std::thread a(worker), b(worker);
  a.join();
  b.join();
  return static_cast<double>(done) / seconds;
}

cordon::Plan standard_plan(const std::string& workspace) {
  cordon::Plan plan;
  plan.policy = cordon::resolve_paths(cordon::load_preset("standard"),
                                      {workspace, std::getenv("HOME") ? std::getenv("HOME") : "/"});
  if (std::getenv("CORDON_BENCH_NO_TOTALS")) {  // diagnostic: rlimits only, no cgroup
    plan.policy.limits.memory_mb.reset();
    plan.policy.limits.max_processes.reset();
  }
  if (std::getenv("CORDON_BENCH_NETWORK")) plan.policy.network.allow = true;  // diagnostic
  plan.requirements = cordon::derive_requirements(plan.policy);
  plan.argv = {std::getenv("CORDON_BENCH_PROGRAM") ? std::getenv("CORDON_BENCH_PROGRAM")
                                                   : "/bin/true"};
  plan.workspace = workspace;
  plan.env = {{"PATH", "/usr/local/bin:/usr/bin:/bin"}, {"LANG", "C.UTF-8"}};
  plan.host_home = std::getenv("HOME") ? std::getenv("HOME") : "/";
  plan.deadline = Clock::now() + std::chrono::seconds(60);
  return plan;
}

// One fresh backend, one probe, one run: the work of a `cordon run` process.
int once() {
  cordon::landlock::LandlockBackend backend(cordon::BackendContext{"landlock", nullptr, {}});
  NullSink sink;
  auto t0 = Clock::now();
  backend.probe();
  auto t1 = Clock::now();
  auto result = backend.run(standard_plan(std::filesystem::current_path()), sink);
  auto t2 = Clock::now();
  if (result.error) std::cerr << result.error->render() << "\n";
  if (std::getenv("CORDON_BENCH_VERBOSE"))
    std::cerr << "probe " << std::chrono::duration<double, std::milli>(t1 - t0).count()
              << " ms, run " << std::chrono::duration<double, std::milli>(t2 - t1).count()
              << " ms\n";
  return result.error ? 125 : result.exit_code;
}

struct InProcess {
  double probe_ms, probe_cpu_ms, run_ms, parent_cpu_ms, sandbox_cpu_ms, machine_cpu_ms;
};

// Inside this process: the median cost of a probe (fresh backend) and of a run (probed one).
InProcess measure_in_process(int runs) {
  std::vector<double> probes, runs_ms, sandbox_cpu, parent_cpu, probe_cpu;
  std::string ws = std::filesystem::current_path();
  cordon::landlock::LandlockBackend warm(cordon::BackendContext{"landlock", nullptr, {}});
  NullSink sink;
  const char* gap_env = std::getenv("CORDON_BENCH_GAP_MS");
  const auto gap = std::chrono::milliseconds(gap_env ? std::atoi(gap_env) : 0);
  for (int i = 0; i < runs; ++i) {
    std::this_thread::sleep_for(gap);
    cordon::landlock::LandlockBackend fresh(cordon::BackendContext{"landlock", nullptr, {}});
    rusage p0{}, p1{}, c0{}, c1{};
    getrusage(RUSAGE_SELF, &p0);
    getrusage(RUSAGE_CHILDREN, &c0);
    auto t0 = Clock::now();
    fresh.probe();
    auto t1 = Clock::now();
    getrusage(RUSAGE_SELF, &p1);
    getrusage(RUSAGE_CHILDREN, &c1);
    auto us = [](const timeval& a, const timeval& b) {
      return (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_usec - a.tv_usec) / 1e3;
    };
    probe_cpu.push_back(us(p0.ru_utime, p1.ru_utime) + us(p0.ru_stime, p1.ru_stime) +
                        us(c0.ru_utime, c1.ru_utime) + us(c0.ru_stime, c1.ru_stime));
    rusage before{}, after{};
    getrusage(RUSAGE_SELF, &before);
    auto result = warm.run(standard_plan(ws), sink);
    getrusage(RUSAGE_SELF, &after);
    auto ms = [](const timeval& a, const timeval& b) {
      return (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_usec - a.tv_usec) / 1e3;
    };
    parent_cpu.push_back(ms(before.ru_utime, after.ru_utime) + ms(before.ru_stime, after.ru_stime));
    sandbox_cpu.push_back(result.cpu_seconds.value_or(0) * 1e3);
    if (result.error && i == 0) std::fprintf(stderr, "%s\n", result.error->render().c_str());
    auto t2 = Clock::now();
    probes.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    runs_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
  }
  // The machine's CPU per run, over runs alone (a probe's namespaces are torn down later, by
  // the kernel's workers, and would be counted with the runs that follow), settled.
  double machine_cpu = settled_busy_ms([&] {
                         for (int i = 0; i < runs; ++i) {
                           std::this_thread::sleep_for(gap);
                           warm.run(standard_plan(ws), sink);
                         }
                       }) /
                       runs;
  auto median = [](std::vector<double>& v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  return {median(probes),     median(probe_cpu),   median(runs_ms),
          median(parent_cpu), median(sandbox_cpu), machine_cpu};
}

void in_process(int runs) {
  InProcess m = measure_in_process(runs);
  std::printf("in process: probe CPU %.2f ms (cordon + its throwaway child)\n", m.probe_cpu_ms);
  std::printf(
      "in process: probe %.2f ms, run of /bin/true %.2f ms wall, CPU %.2f ms in cordon + "
      "%.2f ms in the sandbox (medians); the machine's CPU per run %.2f ms\n",
      m.probe_ms, m.run_ms, m.parent_cpu_ms, m.sandbox_cpu_ms, m.machine_cpu_ms);
}

bool works(const Command& cmd) { return run(cmd) == 0; }

void line(const char* name, Cost c, Cost bare, Cost bwrap) {
  std::printf("%-30s %7.2f ms  x%5.2f bare  %5.2f of bwrap | CPU %6.2f ms  %5.2f of bwrap\n", name,
              c.wall, c.wall / bare.wall, c.wall / bwrap.wall, c.cpu, c.cpu / bwrap.cpu);
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 100;
  double seconds = 3;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--once") return once();
    if (a == "--in-process") {
      in_process(argc > i + 1 ? std::atoi(argv[i + 1]) : 50);
      return 0;
    }
    if (a == "--runs" && i + 1 < argc) runs = std::atoi(argv[++i]);
    if (a == "--seconds" && i + 1 < argc) seconds = std::atof(argv[++i]);
  }
  std::string self = std::filesystem::canonical("/proc/self/exe");
  Command bare{"/bin/true"};
  Command unshare{"unshare", "-Urpfn", "--mount-proc", "true"};
  Command bwrap{"bwrap", "--unshare-all", "--ro-bind", "/",     "/",
                "--dev", "/dev",          "--proc",    "/proc", "true"};
  Command api{self, "--once"};
  // The front end, with landlock built in; and the full executable, which loads the plugin.
  Command cli{CORDON_CLI, "run", "--backend", "landlock", "--", "/bin/true"};
  Command full{CORDON_FULL_CLI, "run",      "--plugin-dir", CORDON_PLUGIN_DIR,
               "--backend",     "landlock", "--",           "/bin/true"};
  std::printf(
      "spawn cost (this machine, uid %d): wall, the median of %d rounds, each running every "
      "command once; CPU, the machine's per run over blocks of 20 runs, settled\n",
      ::getuid(), runs);
  if (!works(api)) {
    std::printf("landlock via the C++ API: does not run here (see stderr)\n");
    run({self, "--once"});
    return 1;
  }
  bool cli_ok = works(cli);  // the CLI keeps its probe between processes (probe_cache.hpp)
  std::vector<Entry> entries{{"bare /bin/true", bare}};
  if (works(unshare)) entries.push_back({"unshare -Urpfn --mount-proc", unshare});
  bool bwrap_ok = works(bwrap);
  if (bwrap_ok) entries.push_back({"bwrap --unshare-all", bwrap});
  Command floor{CORDON_BENCH_FLOOR};
  bool floor_ok = works(floor);
  if (floor_ok) entries.push_back({"floor (static C, see floor.c)", floor});
  entries.push_back({"landlock, C++ API process", api});  // probes every time
  if (cli_ok) {
    entries.push_back({"cordon run --backend landlock", cli});
    entries.push_back({"  the same, probing every run", cli, true});
    entries.push_back({"  the full executable (plugin)", full});
    entries.push_back({"  cordon run --help (start)", {CORDON_CLI, "run", "--help"}});
    entries.push_back({"  a C++ program doing nothing", {CORDON_BENCH_NOOP}});
  }
  std::vector<Cost> costs = measure(entries, runs);
  Cost b = costs[0];
  Cost w{1, 1};
  for (std::size_t k = 0; k < entries.size(); ++k)
    if (bwrap_ok && entries[k].cmd == bwrap) w = costs[k];
  InProcess warm = measure_in_process(runs);
  for (std::size_t k = 0; k < entries.size(); ++k) {
    line(entries[k].name, costs[k], b, w);
    if (entries[k].cmd == api)
      line("landlock, run in a warm process", {warm.run_ms, warm.machine_cpu_ms}, b, w);
  }
  if (!cli_ok)
    std::printf("%-28s not measured: it does not run /bin/true here yet\n", "cordon run");
  Cost f{0, 0}, c{0, 0};
  for (std::size_t k = 0; k < entries.size(); ++k) {
    if (entries[k].cmd == floor) f = costs[k];
    if (entries[k].cmd == cli && !entries[k].probe_cache_off) c = costs[k];
  }
  if (floor_ok && bwrap_ok && cli_ok)
    std::printf(
        "the floor is %.2f of bwrap; cordon run is %.2f x the floor, %.2f ms above it (0.75 of "
        "bwrap leaves %.2f ms above it)\n",
        f.wall / w.wall, c.wall / f.wall, c.wall - f.wall, 0.75 * w.wall - f.wall);
  if (cli_ok) std::printf("%s\n", cordon::bench::front_end_pages(CORDON_CLI).c_str());
  const Command& par = cli_ok ? cli : api;
  std::printf("2 in parallel (%s): %.0f runs/s   (bwrap: %.0f runs/s)\n", cli_ok ? "cli" : "api",
              parallel_rate(par, seconds), bwrap_ok ? parallel_rate(bwrap, seconds) : 0.0);
  return 0;
}
