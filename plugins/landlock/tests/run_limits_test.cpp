// Limits and lifecycle, both ways: rlimits, task and memory totals, the deadline, survivors.
#include <cordon/sdk/capabilities.hpp>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <thread>

#include <cordon/sdk/cgroup.hpp>
#include "reductions.hpp"
#include "support.hpp"

using namespace cordon;
using namespace cordon::landlock::test;
using namespace std::chrono_literals;

namespace {

std::string tool(const Policy& policy, const TempDir& ws, std::vector<std::string> args,
                 RunResult* result = nullptr) {
  args.insert(args.begin(), probe_tool());
  CaptureSink sink;
  auto r = backend().run(make_plan(policy, ws.path(), args), sink);
  if (result) *result = r;
  return r.error ? r.error->render() : sink.out;
}

int count_after(const std::string& out, const std::string& word) {
  auto at = out.find(word);
  return at == std::string::npos ? -1 : std::stoi(out.substr(at + word.size()));
}

}  // namespace

TEST_CASE("limits: open files and file size are bounded", "[userns][limits]") {
  if (!sandbox_available()) return;
  TempDir ws;
  auto policy = with_tool(ws);
  CHECK(count_after(tool(policy, ws, {"opens", "100"}), "opened ") == 100);
  policy.limits.max_open_files = 32;
  CHECK(count_after(tool(policy, ws, {"opens", "100"}), "opened ") == 29);
  policy.limits.max_file_size_mb = 1;
  CaptureSink sink;
  auto r = run_sh(policy, ws.path(),
                  "head -c 500000 /dev/zero > small && echo small; head -c 2000000 /dev/zero > big;"
                  " stat -c %s big",
                  sink);
  CHECK(sink.out == "small\n1048576\n");
}

TEST_CASE("limits: CPU seconds end a spinning process", "[userns][limits]") {
  if (!sandbox_available()) return;
  TempDir ws;
  auto policy = with_tool(ws);
  policy.limits.cpu_seconds = 1;
  auto start = std::chrono::steady_clock::now();
  RunResult r;
  tool(policy, ws, {"spin"}, &r);
  CHECK((r.signal == SIGXCPU || r.signal == SIGKILL));
  CHECK_FALSE(r.timed_out);
  CHECK(std::chrono::steady_clock::now() - start < 10s);
}

TEST_CASE("limits: max_processes bounds the whole sandbox", "[userns][limits]") {
  if (!sandbox_available()) return;
  TempDir ws;
  auto policy = with_tool(ws);
  CHECK(count_after(tool(policy, ws, {"forks", "40"}), "forked ") == 40);
  policy.limits.max_processes = 10;
  // A cgroup, or RLIMIT_NPROC counted per user namespace (Linux >= 5.14).
  if (!proven_here(cap::limit_processes, true))
    return check_refused(policy, with_tool(ws), ws, cap::limit_processes);
  // The tool itself is one of the ten: nine children fit, the tenth is refused.
  CHECK(count_after(tool(policy, ws, {"forks", "40"}), "forked ") == 9);
  // A fork bomb stays inside its limit and dies with the sandbox at the deadline.
  auto bomb = make_plan(policy, ws.path(), {"/bin/sh", "-c", "f() { f | f & }; f; wait"});
  bomb.deadline = std::chrono::steady_clock::now() + 2s;
  auto start = std::chrono::steady_clock::now();
  CaptureSink sink;
  backend().run(bomb, sink);
  CHECK(std::chrono::steady_clock::now() - start < 6s);
  CHECK(count_after(tool(policy, ws, {"forks", "40"}), "forked ") == 9);
}

TEST_CASE("limits: memory is a total for the sandbox (cgroup only)", "[userns][limits]") {
  if (!sandbox_available()) return;
  TempDir ws;
  auto policy = with_tool(ws);
  policy.limits.memory_mb = 64;
  // Only a cgroup makes it a total: without one (an unprivileged caller without a delegated
  // subtree, CORDON_CGROUPS=off) such a policy is refused.
  if (!proven_here(cap::limit_memory))
    return check_refused(policy, with_tool(ws), ws, cap::limit_memory);
  RunResult fits;
  CHECK(tool(policy, ws, {"alloc", "16"}, &fits) == "allocated\n");
  CHECK(fits.notes.empty());
  RunResult r;
  CHECK(tool(policy, ws, {"alloc", "256"}, &r).empty());
  CHECK(r.signal == SIGKILL);
  CHECK(r.peak_memory_bytes.value_or(0) <= 64ull << 20);
  CHECK(r.peak_memory_bytes.value_or(0) >= 16ull << 20);
  // The kill is the memory limit's, and the run says so.
  CHECK(r.notes == std::vector<std::string>{"killed by the memory limit (limits.memory_mb = 64)"});
}

TEST_CASE("limits: filling /tmp or HOME ends in ENOSPC, within the memory limit",
          "[userns][limits]") {
  if (!sandbox_available()) return;
  TempDir ws;
  auto policy = with_tool(ws);
  policy.limits.memory_mb = 64;
  if (!proven_here(cap::limit_memory))
    return check_refused(policy, with_tool(ws), ws, cap::limit_memory);
  // The tmpfs holds half the limit: the write fails in the command, which goes on, and no
  // process of the sandbox is killed for it.
  for (const char* dir : {"/tmp", "$HOME"}) {
    CaptureSink sink;
    std::string target = std::string(dir) + "/fill";
    auto r =
        run_sh(policy, ws.path(),
               "head -c 200000000 /dev/zero > " + target + "; echo $?; stat -c %s " + target, sink);
    INFO(dir << ": " << sink.out << sink.err);
    CHECK(r.exit_code == 0);
    REQUIRE(sink.out.starts_with("1\n"));
    auto written = std::stoull(sink.out.substr(2));
    CHECK(written > 24ull << 20);
    CHECK(written <= 32ull << 20);
    CHECK(sink.err.find("No space left on device") != std::string::npos);
    CHECK(r.notes.empty());
  }
}

TEST_CASE("limits: the run's resources are measured where they can be, absent elsewhere",
          "[userns][limits]") {
  if (!sandbox_available()) return;
  TempDir ws;
  auto policy = with_tool(ws);
  policy.limits.memory_mb.reset();
  RunResult r;
  CHECK(tool(policy, ws, {"alloc", "16"}, &r) == "allocated\n");
  // The CPU time of the sandbox's processes is always measured (the keeper reaps them all).
  REQUIRE(r.cpu_user_seconds);
  REQUIRE(r.cpu_system_seconds);
  CHECK(*r.cpu_user_seconds + *r.cpu_system_seconds > 0);
  // Without a memory group nothing measures the sandbox's peak: one process's is no total.
  CHECK_FALSE(r.peak_memory_bytes);
  // No counter of started processes exists for a sandbox here.
  CHECK_FALSE(r.processes_started);
}

TEST_CASE("lifecycle: at the deadline the whole tree dies, setsid and SIGTERM-proof included",
          "[userns][lifecycle]") {
  if (!sandbox_available()) return;
  TempDir ws;
  auto policy = base_policy(ws.path(), "");
  auto plan =
      make_plan(policy, ws.path(),
                {"/bin/sh", "-c",
                 "setsid sh -c 'trap \"\" TERM HUP; (while :; do date +%s%N > b.t; mv b.t beat; "
                 "sleep 0.05; done) &'; while [ ! -s beat ]; do sleep 0.05; done; sleep 100"});
  plan.deadline = std::chrono::steady_clock::now() + 2s;
  CaptureSink sink;
  auto start = std::chrono::steady_clock::now();
  auto r = backend().run(plan, sink);
  CHECK(r.timed_out);
  CHECK(r.cli_status() == 124);
  CHECK(std::chrono::steady_clock::now() - start < 5s);
  auto before = read_file(ws / "beat");
  CHECK_FALSE(before.empty());
  std::this_thread::sleep_for(300ms);
  CHECK(read_file(ws / "beat") == before);
}

TEST_CASE("lifecycle: a deadline that passed before the sandbox started means no run",
          "[userns][lifecycle]") {
  if (!sandbox_available()) return;
  TempDir ws;
  auto plan = make_plan(base_policy(ws.path(), ""), ws.path(),
                        {"/bin/sh", "-c", "echo ran > marker; sleep 100"});
  CaptureSink sink;
  SECTION("a deadline already gone: nothing is started") {
    plan.deadline = std::chrono::steady_clock::now() - 1s;
    auto r = backend().run(plan, sink);
    REQUIRE_FALSE(r.error);
    CHECK(r.timed_out);
    CHECK(r.cli_status() == 124);
    CHECK(std::find(r.notes.begin(), r.notes.end(),
                    "the deadline passed during the set-up: the command did not run") !=
          r.notes.end());
    CHECK_FALSE(std::filesystem::exists(ws / "marker"));
  }
  SECTION("a deadline ahead: the same command starts, and is killed at it") {
    plan.deadline = std::chrono::steady_clock::now() + 1s;
    auto r = backend().run(plan, sink);
    REQUIRE_FALSE(r.error);
    CHECK(r.timed_out);
    CHECK(read_file(ws / "marker") == "ran\n");
  }
}

TEST_CASE("lifecycle: nothing outlives the command", "[userns][lifecycle]") {
  if (!sandbox_available()) return;
  TempDir ws;
  CaptureSink sink;
  auto r = run_sh(
      base_policy(ws.path(), ""), ws.path(),
      "(sleep 0.3; echo late > late) & (setsid sleep 0.3; echo later > later) & echo done", sink);
  CHECK(r.exit_code == 0);
  CHECK(sink.out == "done\n");
  std::this_thread::sleep_for(700ms);
  CHECK_FALSE(std::filesystem::exists(ws / "late"));
  CHECK_FALSE(std::filesystem::exists(ws / "later"));
}

namespace {

// How many live processes (zombies are not) are in the pid namespace `link` ("pid:[N]").
int processes_in(const std::string& link) {
  int n = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::filesystem::path ns = std::filesystem::read_symlink(entry.path() / "ns" / "pid", ec);
    if (ec || ns.string() != link) continue;
    std::string stat = read_file(entry.path() / "stat");
    auto close = stat.rfind(')');
    if (close == std::string::npos || close + 2 >= stat.size() || stat[close + 2] == 'Z') continue;
    UNSCOPED_INFO("left in the sandbox: " << stat);
    ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("lifecycle: if cordon dies, the sandbox dies with it", "[userns][lifecycle]") {
  if (!sandbox_available()) return;
  TempDir ws;
  // A survivor in its own session besides the heartbeat, and the sandbox's pid namespace noted.
  auto plan = make_plan(base_policy(ws.path(), ""), ws.path(),
                        {"/bin/sh", "-c",
                         "readlink /proc/self/ns/pid > ns; setsid sleep 600 & "
                         "while :; do date +%s%N > b.t; mv b.t beat; sleep 0.05; done"});
  pid_t cordon = ::fork();
  if (cordon == 0) {
    CaptureSink sink;
    backend().run(plan, sink);
    ::_exit(0);
  }
  for (int i = 0; i < 100 && read_file(ws / "beat").empty(); ++i) std::this_thread::sleep_for(20ms);
  REQUIRE_FALSE(read_file(ws / "beat").empty());
  ::kill(cordon, SIGKILL);
  ::waitpid(cordon, nullptr, 0);
  std::this_thread::sleep_for(200ms);
  auto before = read_file(ws / "beat");
  std::this_thread::sleep_for(300ms);
  CHECK(read_file(ws / "beat") == before);
  // Nothing is left in the namespace, its pid 1 (the keeper) included.
  std::string ns = read_file(ws / "ns");
  if (!ns.empty() && ns.back() == '\n') ns.pop_back();
  REQUIRE(ns.starts_with("pid:["));
  int left = processes_in(ns);
  for (int i = 0; i < 100 && left > 0; ++i) {
    std::this_thread::sleep_for(20ms);
    left = processes_in(ns);
  }
  CHECK(left == 0);
}

TEST_CASE("limits: cpu_percent caps the sandbox's share of a CPU (cgroup only)",
          "[userns][limits]") {
  if (!sandbox_available()) return;
  TempDir ws;
  if (!proven_here(cap::limit_cpu_share)) {
    auto policy = with_tool(ws);
    policy.limits.cpu_percent = 10;
    return check_refused(policy, with_tool(ws), ws, cap::limit_cpu_share);
  }
  auto spin = [&ws](std::optional<std::uint64_t> percent) {
    auto policy = with_tool(ws);
    policy.limits.cpu_percent = percent;
    auto plan = make_plan(policy, ws.path(), {probe_tool(), "spin"});
    plan.deadline = std::chrono::steady_clock::now() + 1500ms;
    CaptureSink sink;
    return backend().run(plan, sink).cpu_seconds.value_or(-1);
  };
  double limited = spin(10), free = spin(std::nullopt);
  INFO("cpu seconds in 1.5 s: limited to 10% " << limited << ", unlimited " << free);
  CHECK(limited >= 0);
  CHECK(limited <= 0.2);
  CHECK(free >= 0.25);
}

TEST_CASE("limits: a group left by a killed cordon with the same pid does not stop a run",
          "[userns][limits]") {
  if (!sandbox_available()) return;
  auto cg = cordon::landlock::probe_cgroups_unless_off(::geteuid());
  if (cg.version == cordon::sdk::CgroupVersion::none) {
    WARN("no cgroup here: " << cg.evidence);
    return;
  }
  // The names this process will use next are cordon-<pid>-<n>: leave empty groups under them,
  // as a cordon with this pid that was killed would have.
  std::vector<std::string> stale;
  for (const std::string* parent : {&cg.v2_dir, &cg.memory_dir, &cg.pids_dir}) {
    if (parent->empty()) continue;
    for (int n = 0; n < 200; ++n) {
      std::string dir = *parent + "/cordon-" + std::to_string(::getpid()) + "-" + std::to_string(n);
      if (::mkdir(dir.c_str(), 0755) == 0) stale.push_back(dir);
    }
  }
  REQUIRE_FALSE(stale.empty());
  TempDir ws;
  auto policy = base_policy(ws.path(), "");
  policy.limits.max_processes = 20;
  policy.limits.memory_mb = 256;
  CaptureSink sink;
  auto r = backend().run(make_plan(policy, ws.path(), {"/bin/true"}), sink);
  for (const auto& dir : stale) ::rmdir(dir.c_str());
  INFO((r.error ? r.error->render() : std::string()));
  CHECK_FALSE(r.error);
  CHECK(r.exit_code == 0);
}
