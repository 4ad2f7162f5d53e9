// execute_command of /bin/true through one `cordon mcp` server (the standard policy, landlock),
// sequentially and 4 calls at a time, against a `cordon run` process per command and a bwrap
// spawn per command (`bwrap --unshare-all --ro-bind / / --dev /dev --proc /proc true`). Wall
// time per command and the machine's CPU time per command (/proc/stat: every process, the
// server and its sandboxes included), each as a ratio of bwrap's.
// Beside them, the floor (bench/spawn/floor.c: fresh namespaces, /proc, Landlock, seccomp and
// /bin/true, nothing of cordon) and what it implies for a server that makes a fresh sandbox for
// every call: calls that keep every CPU busy average at least the floor's CPU time divided by
// the CPUs, whatever is prepared ahead.
// And the command alone: a bare spawn of /bin/true, with nothing around it, which every call
// pays whatever the sandbox (here it is a sizeable part of the goal of 0.25 of bwrap).
// Last, calls one at a time with a pause before each, as an agent makes them (it thinks between
// calls): the server prepares the next sandbox in the pause, so this is the wait an agent sees.
// Measured against bwrap spawns paused the same way: after a pause a spawn costs a little more
// here. The CPU per call then counts the machine's background work during the pauses too.
//   cordon-bench-mcp [N]
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "machine_cpu.hpp"
#include "mcp_client.hpp"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

struct Cost {
  double wall_ms = 0, cpu_ms = 0;
};

using cordon::bench::settled_busy_ms;

// Wall per run, and the machine's CPU per run, settled (machine_cpu.hpp).
Cost measure(int n, const std::function<void()>& batch, int per_batch = 1) {
  double wall = 0;
  double cpu = settled_busy_ms([&] {
    auto t0 = Clock::now();
    for (int i = 0; i < n / per_batch; ++i) batch();
    wall = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  });
  return {wall / n, cpu / n};
}

// Like measure(), but `one()` is timed alone, after a pause the clock does not count.
Cost measure_paused(int n, const std::function<void()>& one) {
  constexpr auto kPause = std::chrono::milliseconds(50);
  double wall = 0;
  double cpu = settled_busy_ms([&] {
    for (int i = 0; i < n; ++i) {
      std::this_thread::sleep_for(kPause);
      auto t0 = Clock::now();
      one();
      wall += std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    }
  });
  return {wall / n, cpu / n};
}

int run(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", 1, 0);
  pid_t pid = 0;
  if (posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ) != 0) return 127;
  posix_spawn_file_actions_destroy(&fa);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

void line(const char* what, Cost c, Cost base) {
  std::printf("%-34s %7.2f ms  %5.2f of bwrap | CPU %7.2f ms  %5.2f of bwrap\n", what, c.wall_ms,
              c.wall_ms / base.wall_ms, c.cpu_ms, c.cpu_ms / base.cpu_ms);
}

}  // namespace

int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 40;
  n -= n % 4;
  char dir[] = "/tmp/cordon-bench-mcp-XXXXXX";
  if (!::mkdtemp(dir)) return 1;
  ::chmod(dir, 0755);  // the sandbox's identity (65534 when run as root) enters it
  std::vector<std::string> bwrap = {"bwrap", "--unshare-all", "--ro-bind", "/",     "/",
                                    "--dev", "/dev",          "--proc",    "/proc", "true"};
  std::vector<std::string> cordon_run = {CORDON_CLI, "run", "--workspace", dir, "--", "/bin/true"};
  if (run(bwrap) != 0) {
    std::fprintf(stderr, "bench-mcp: bwrap does not run here\n");
    return 1;
  }
  run(cordon_run);
  Cost base = measure(n, [&] { run(bwrap); });
  std::vector<std::string> floor_argv = {CORDON_BENCH_FLOOR};
  const bool have_floor = run(floor_argv) == 0;
  Cost floor = have_floor ? measure(n, [&] { run(floor_argv); }) : Cost{};
  Cost process = measure(n, [&] { run(cordon_run); });
  std::vector<std::string> bare_argv = {"/bin/true"};
  Cost bare = measure(n, [&] { run(bare_argv); });
  Cost base_paused = measure_paused(n, [&] { run(bwrap); });
  Cost bare_paused = measure_paused(n, [&] { run(bare_argv); });
  Cost serial, parallel, paused;
  {
    cordon::bench::McpServer server(CORDON_CLI, {"--policy", "standard", "--workspace", dir});
    server.calls(1);  // the first call probes the backends
    serial = measure(n, [&] { server.calls(1); });
    parallel = measure(
        n, [&] { server.calls(4); }, 4);
    paused = measure_paused(n, [&] { server.calls(1); });
  }
  ::rmdir(dir);
  std::printf("mcp: %d commands of /bin/true, standard policy, per command\n", n);
  std::printf("%-34s %7.2f ms  (baseline) | CPU %7.2f ms\n", "bwrap spawn", base.wall_ms,
              base.cpu_ms);
  line("cordon run process", process, base);
  line("cordon mcp, one call at a time", serial, base);
  line("cordon mcp, 4 calls at a time", parallel, base);
  std::printf("%-34s %7.2f ms  (baseline) | CPU %7.2f ms\n", "bwrap spawn, 50 ms apart",
              base_paused.wall_ms, base_paused.cpu_ms);
  line("cordon mcp, calls 50 ms apart", paused, base_paused);
  line("/bin/true alone, bare spawn", bare, base);
  line("/bin/true alone, 50 ms apart", bare_paused, base_paused);
  if (have_floor) {
    line("floor (fresh sandbox, no cordon)", floor, base);
    const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
    const double bound = floor.cpu_ms / static_cast<double>(cpus > 0 ? cpus : 1);
    std::printf(
        "a fresh sandbox per call: calls that keep all %ld CPUs busy average at least the floor's "
        "CPU / %ld = %.2f ms, %.2f of bwrap\n",
        cpus, cpus, bound, bound / base.wall_ms);
  }
  return 0;
}
