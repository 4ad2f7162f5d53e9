// Lifecycle: the wall-clock deadline kills the whole tree (setsid and double-forked survivors
// included), nothing of a run outlives cordon (even when cordon is killed), and an output flood
// keeps head and tail without cordon's own memory growing with it.
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <thread>

#include "cordon_run.hpp"
#include "host.hpp"
#include "probes.hpp"

using namespace escape;
using Catch::Matchers::Contains;
using namespace std::chrono_literals;

namespace {

/// Waits up to `limit` for no host process to carry `marker`; returns the ones left.
std::vector<pid_t> wait_gone(const std::string& marker, std::chrono::milliseconds limit) {
  auto until = std::chrono::steady_clock::now() + limit;
  auto left = pids_with_marker(marker);
  while (!left.empty() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(50ms);
    left = pids_with_marker(marker);
  }
  return left;
}

/// Waits up to `limit` for lifeprobe's three survivors of `marker` (the probe, its setsid
/// child and the double-forked grandchild, each named "lingerer") to run; returns how many do.
/// Only they count: cordon's command line and its keeper (a clone of it) carry the marker too.
std::size_t wait_lingering(const std::string& marker, std::chrono::milliseconds limit) {
  auto until = std::chrono::steady_clock::now() + limit;
  auto found = pids_with_argument(marker, "lingerer").size();
  while (found < 3 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(50ms);
    found = pids_with_argument(marker, "lingerer").size();
  }
  return found;
}

/// Kills whatever still carries the marker when a test ends, however it ends.
struct KillMarked {
  std::string marker;
  ~KillMarked() {
    for (pid_t pid : pids_with_marker(marker)) kill(pid, SIGKILL);
  }
};

PolicySpec with_timeout(const Scratch& s, const std::string& timeout) {
  auto p = confined(s.root());
  p.limits["timeout"] = toml_duration(timeout);
  return p;
}

/// Starts cordon on `command` without waiting; the caller waits.
std::unique_ptr<Process> start_cordon(Scratch& s, const PolicySpec& policy,
                                      const std::vector<std::string>& command, bool json) {
  RunExtras extras;
  extras.json = json;
  SpawnOptions o;
  o.argv = cordon_argv(s, s.policy_file(policy.toml()), command, extras);
  o.deadline = 30s;
  return std::make_unique<Process>(o);
}

/// Starts lifeprobe's three marked `survivors` under a 60 s timeout and returns once all three
/// run, for a test that then signals cordon.
std::unique_ptr<Process> start_survivors(Scratch& s, const std::string& marker, bool json,
                                         std::chrono::milliseconds within) {
  auto cordon =
      start_cordon(s, with_timeout(s, "60s"), {probe("lifeprobe"), "survivors", marker}, json);
  REQUIRE(wait_lingering(marker, within) == 3);
  return cordon;
}

}  // namespace

TEST_CASE("escape: the wall-clock timeout ends the run with 124",
          "[escape][userns][timeout][docker]") {
  Scratch s;
  auto policy = with_timeout(s, short_timeout(1));
  auto quick = run_probe(s, policy, "lifeprobe", {"sleep", "100"});
  INFO(quick.describe());
  CHECK_THAT(quick.line("sleep"), IsOk());
  CHECK_FALSE(quick.json->timed_out);
  CHECK(quick.proc.status == 0);
  auto slow = run_probe(s, policy, "lifeprobe", {"sleep", "30000"});
  INFO(slow.describe());
  CHECK(slow.json->timed_out);
  CHECK(slow.proc.status == 124);
  CHECK(slow.lines("sleep").empty());
  CHECK(slow.proc.wall < 10s + std::chrono::seconds(start_allowance()));
  RunExtras plain;
  plain.json = false;
  auto plain_run = run_cordon(s, policy, {probe("lifeprobe"), "sleep", "30000"}, plain);
  INFO(plain_run.describe());
  CHECK(plain_run.proc.status == 124);
}

TEST_CASE("escape: setsid and double-forked survivors die at the timeout",
          "[escape][userns][timeout][lifecycle][docker]") {
  Scratch s;
  auto marker = unique_marker("cordon-escape-survivor");
  KillMarked cleanup{marker};
  auto cordon = start_cordon(s, with_timeout(s, short_timeout(2)),
                             {probe("lifeprobe"), "survivors", marker}, true);
  // While the run lasts, the survivors are visible from the host: the scan that finds them gone
  // afterwards works.
  CHECK(wait_lingering(marker, 1500ms + std::chrono::seconds(start_allowance())) == 3);
  Ran ran = make_ran(cordon->wait(), true);
  INFO(ran.describe());
  CHECK(ran.proc.status == 124);
  REQUIRE(ran.json.has_value());
  CHECK(ran.json->timed_out);
  CHECK_THAT(ran.line("survivors"), IsOk());
  CHECK(wait_gone(marker, 500ms).empty());
}

TEST_CASE("escape: SIGTERM or SIGINT or SIGHUP to cordon stops the run and reports it",
          "[escape][userns][lifecycle][docker]") {
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
    Scratch s;
    auto marker = unique_marker("cordon-escape-stopped");
    KillMarked cleanup{marker};
    auto cordon = start_survivors(s, marker, true, 4000ms);
    kill(cordon->pid(), sig);
    Ran ran = make_ran(cordon->wait(), true);
    INFO("cordon got signal " << sig << "\n" << ran.describe());
    CHECK_FALSE(ran.proc.harness_killed);
    CHECK(ran.proc.wall < 20s);
    // The run is stopped like at its deadline, cordon says so and exits as if killed by it.
    CHECK(ran.proc.signal == 0);
    CHECK(ran.proc.status == 128 + sig);
    REQUIRE(ran.json.has_value());
    CHECK_FALSE(ran.json->error.has_value());
    CHECK(ran.json->signal == SIGKILL);
    CHECK(wait_gone(marker, 2000ms).empty());
  }
}

// Not on docker: a SIGKILL'd cordon cannot remove its container; its waiter ends the command at
// the run's deadline, and the next run or `cordon gc` removes it (the docker suite tests
// both), while landlock's sandbox dies with cordon.
TEST_CASE("escape: nothing of a run outlives a killed cordon", "[escape][userns][lifecycle]") {
  for (int sig : {SIGTERM, SIGINT, SIGKILL}) {
    Scratch s;
    auto marker = unique_marker("cordon-escape-orphan");
    KillMarked cleanup{marker};
    auto cordon = start_survivors(s, marker, false, 2000ms);
    kill(cordon->pid(), sig);
    Exit exit = cordon->wait();
    INFO("cordon got signal " << sig << ", exit " << exit.status << ", stderr: " << exit.err);
    CHECK_FALSE(exit.harness_killed);
    CHECK(exit.wall < 20s);
    CHECK(wait_gone(marker, 2000ms).empty());
  }
}

TEST_CASE("escape: a 200 MB output flood keeps head and tail in bounded memory",
          "[escape][userns][output][docker]") {
  Scratch s;
  auto policy = confined(s.root());
  policy.limits["max_output_bytes"] = "1048576";
  auto small = run_probe(s, policy, "lifeprobe", {"flood", "4096"});
  INFO(small.describe());
  CHECK_FALSE(small.json->out_truncated);
  CHECK(small.out().size() == 4096);
  long baseline_kb = small.proc.max_rss_kb;

  auto flood = run_probe(s, policy, "lifeprobe", {"flood", std::to_string(200LL << 20)});
  INFO(flood.describe());
  INFO("peak RSS: " << flood.proc.max_rss_kb << " kB (a 4 KB run: " << baseline_kb << " kB)");
  CHECK(flood.json->out_truncated);
  CHECK(flood.out().rfind("HEAD-MARK\n", 0) == 0);
  CHECK(flood.out().size() >= 10);
  CHECK(flood.out().substr(flood.out().size() - 10) == "TAIL-MARK\n");
  CHECK(flood.out().size() <= (1u << 20) + 4096);
  CHECK(flood.proc.status == 0);
  // Streaming, not buffering: cordon grows by a few caps at most, nowhere near 200 MB. (wait4's
  // peak covers cordon and the sandbox processes it reaped: an upper bound on cordon's own.)
  CHECK(flood.proc.max_rss_kb < baseline_kb + 32 * 1024);
}
