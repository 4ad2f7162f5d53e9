// Plugin runtime start-up, as medians of wall-clock time with ratios against a baseline:
//   - `cordon version`, `cordon --version`, `cordon backends` against spawning /bin/true;
//   - discovering and probing 20 plugins, listing them, and finding one by name, each in a fresh
//     forked process (so every dlopen is cold) against a fork that does nothing;
//   - `cordon run` on one of the 20 with a backend that runs nothing.
// The 20 plugins are copies of one bench plugin under 20 names (the name is patched in place).
#include <sys/wait.h>
#include <unistd.h>
#include <cordon/registry.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "quiet_spawn.hpp"

namespace fs = std::filesystem;

namespace {

constexpr int kRuns = 40;
constexpr int kPlugins = 20;
constexpr std::string_view kToken = "cbench00";

std::string bench_name(int i) {
  char name[16];
  std::snprintf(name, sizeof name, "cbench%02d", i);
  return name;
}

// Copies the bench plugin under kPlugins names into a fresh directory.
fs::path make_plugins() {
  std::ifstream in(BENCH_PLUGIN, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  char dir[] = "/tmp/cordon-bench-XXXXXX";
  if (!::mkdtemp(dir) || bytes.empty()) {
    std::perror("cordon-bench-runtime: set-up");
    std::exit(1);
  }
  for (int i = 0; i < kPlugins; ++i) {
    std::string copy = bytes, name = bench_name(i);
    for (auto at = copy.find(kToken); at != std::string::npos; at = copy.find(kToken, at + 1))
      copy.replace(at, kToken.size(), name);
    std::ofstream(fs::path(dir) / ("cordon-backend-" + name + ".so"), std::ios::binary) << copy;
  }
  return dir;
}

double median_ms(const std::function<void()>& fn) {
  for (int i = 0; i < 3; ++i) fn();  // warm the page cache
  std::vector<double> times;
  for (int i = 0; i < kRuns; ++i) {
    auto start = std::chrono::steady_clock::now();
    fn();
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Runs argv with its output discarded; exits the benchmark if it fails.
void spawn_quiet(const std::vector<std::string>& args) {
  pid_t pid = cordon::bench::start_quiet(args);
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "cordon-bench-runtime: '%s %s' failed\n", args[0].c_str(),
                 args.size() > 1 ? args[1].c_str() : "");
    std::exit(1);
  }
}

// Runs fn in a forked child: this process never loads a plugin, so each child starts cold.
void in_child(const std::function<void()>& fn) {
  pid_t pid = ::fork();
  if (pid == 0) {
    fn();
    _exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
}

cordon::RegistryOptions only(const fs::path& dir) {
  cordon::RegistryOptions o;
  o.plugin_dirs = {dir};
  o.use_environment = false;
  o.use_default_dirs = false;
  return o;
}

struct Row {
  std::string what;
  double ms;
  double baseline_ms;
};

void print(const std::vector<Row>& rows) {
  std::printf("cordon plugin runtime, median of %d runs (wall clock)\n\n", kRuns);
  std::printf("  %-58s %9s %8s\n", "what", "ms", "ratio");
  for (const auto& r : rows)
    std::printf("  %-58s %9.3f %7.2fx\n", r.what.c_str(), r.ms, r.ms / r.baseline_ms);
}

}  // namespace

int main() {
  const fs::path dir = make_plugins();
  const std::string cli = CORDON_CLI, plugins = dir.string();
  std::vector<Row> rows;
  double spawn_base = median_ms([] { spawn_quiet({"/bin/true"}); });
  rows.push_back({"spawn /bin/true (baseline of the cordon rows)", spawn_base, spawn_base});
  for (auto args : std::vector<std::vector<std::string>>{
           {cli, "version"},
           {cli, "--version"},
           {cli, "backends"},
           {cli, "backends", "--plugin-dir", plugins},
           {cli, "run", "--backend", bench_name(7), "--plugin-dir", plugins, "--", "x"}}) {
    std::string what;
    for (std::size_t i = 1; i < args.size(); ++i)
      what += (i > 1 ? " " : "") + (args[i] == plugins ? std::string("<20 plugins>") : args[i]);
    rows.push_back({"cordon " + what, median_ms([&] { spawn_quiet(args); }), spawn_base});
  }
  double fork_base = median_ms([] { in_child([] {}); });
  rows.push_back({"fork + exit (baseline of the in-process rows)", fork_base, fork_base});
  rows.push_back({"discover + probe 20 plugins (fresh process)", median_ms([&] {
                    in_child([&] {
                      cordon::Registry r(only(dir));
                      r.discover();
                      for (const auto& name : r.names()) r.probe(name);
                    });
                  }),
                  fork_base});
  rows.push_back({"list 20 plugin names, load none (fresh process)",
                  median_ms([&] { in_child([&] { cordon::Registry(only(dir)).names(); }); }),
                  fork_base});
  rows.push_back({"find + probe one of 20 by name, load 1 (fresh process)", median_ms([&] {
                    in_child([&] { cordon::Registry(only(dir)).probe(bench_name(13)); });
                  }),
                  fork_base});
  print(rows);
  fs::remove_all(dir);
  return 0;
}
