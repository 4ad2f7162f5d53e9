// A killed cordon leaves nothing running past its deadline: the waiter (pid 1) kills the command
// at the deadline it was given, whoever is left to watch; and the containers of a dead cordon or
// job supervisor (a zombie included) are found and removed by collect_garbage. Through the real
// CLI and the real daemon, both ways.
#include <boost/json/parse.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "api.hpp"
#include "container.hpp"
#include "process.hpp"
#include "support.hpp"

using namespace cordon;
using namespace cordon::docker;
using namespace cordon::docker::test;
using namespace std::chrono_literals;

namespace {

using Clock = std::chrono::steady_clock;

// The run containers labelled cordon.pid=`pid` (not the image's scans), each with whether it
// is running.
std::vector<std::pair<std::string, bool>> containers_of(pid_t pid) {
  std::string filter = R"({"label":["cordon.pid=)" + std::to_string(pid) + R"("]})";
  Response r =
      http_request(test_endpoint(), "GET", "/containers/json?all=1&filters=" + url_encode(filter));
  std::vector<std::pair<std::string, bool>> out;
  auto parsed = boost::json::parse(r.body);
  for (const auto& c : parsed.as_array()) {
    const auto& o = c.as_object();
    std::string run(o.at("Labels").as_object().at("cordon.run").as_string());
    if (run == "exec-probe" || run == "multicall-scan") continue;
    out.emplace_back(std::string(o.at("Id").as_string()), o.at("State").as_string() == "running");
  }
  return out;
}

// Starts `cordon run` of `script` with `timeout`, waits until its container runs and the script
// has made `started_file`, kills cordon with SIGKILL and returns its pid and when it was started.
std::pair<pid_t, Clock::time_point> run_and_kill(const TempDir& ws, const std::string& timeout,
                                                 const std::string& script,
                                                 const std::string& started_file) {
  auto config = cli_config(ws);
  escape::SpawnOptions o;
  o.argv = {CORDON_CLI, "run",          "--backend", "docker", "--config",    config,
            "--policy", cli_policy(ws), "--timeout", timeout,  "--workspace", ws.path().string(),
            "--",       "/bin/sh",      "-c",        script};
  auto started = Clock::now();
  escape::Process cordon_run(o);
  pid_t pid = cordon_run.pid();
  bool running = false;
  for (int i = 0; i < 100 && !running; ++i) {
    std::this_thread::sleep_for(100ms);
    auto mine = containers_of(pid);
    running = !mine.empty() && mine.front().second;
  }
  REQUIRE(running);
  // The command runs once the waiter has its input (however long a loaded host takes).
  bool command_started = false;
  for (int i = 0; i < 300 && !command_started; ++i) {
    command_started = ::access(started_file.c_str(), F_OK) == 0;
    if (!command_started) std::this_thread::sleep_for(50ms);
  }
  REQUIRE(command_started);
  ::kill(pid, SIGKILL);
  CHECK(cordon_run.wait().signal == SIGKILL);
  return {pid, started};
}

// Waits (at most `limit` after `from`) until no container of `pid` runs; how long after `from`.
std::chrono::milliseconds stopped_after(pid_t pid, Clock::time_point from,
                                        std::chrono::seconds limit) {
  while (Clock::now() - from < limit) {
    auto mine = containers_of(pid);
    if (std::none_of(mine.begin(), mine.end(), [](const auto& c) { return c.second; })) break;
    std::this_thread::sleep_for(200ms);
  }
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - from);
}

// `cordon gc --backend docker`'s output.
std::string collect(const TempDir& ws) {
  escape::SpawnOptions gc;
  gc.argv = {CORDON_CLI, "gc", "--backend", "docker", "--config", cli_config(ws)};
  auto r = escape::run_process(gc);
  return r.out + r.err;
}

// The exit status of another `cordon run --backend docker -- true`: a new process, whose first
// run against the daemon sweeps what dead cordons left.
int another_run(const TempDir& ws) {
  escape::SpawnOptions o;
  o.argv = {CORDON_CLI,     "run",      "--backend",    "docker",      "--config",
            cli_config(ws), "--policy", cli_policy(ws), "--workspace", ws.path().string(),
            "--",           "true"};
  auto r = escape::run_process(o);
  INFO(r.err);
  return r.status;
}

}  // namespace

TEST_CASE("lifetime: a first run's sweep spares only a running container with a deadline ahead",
          "[unit][gc]") {
  auto listed = [](const char* state, const char* deadline) {
    boost::json::object labels{{"cordon.run", "r1"}};
    if (deadline != nullptr) labels[kDeadlineLabel] = deadline;
    return boost::json::object{{"State", state}, {"Labels", std::move(labels)}};
  };
  const std::int64_t now = 1'800'000'000'000;
  CHECK(spared(listed("running", "1800000005000"), Sweep::spare_bounded, now));
  // Removed: past its deadline, stopped, without a deadline (pooled), a label not a number,
  // and every one when `cordon gc` asks.
  CHECK_FALSE(spared(listed("running", "1799999995000"), Sweep::spare_bounded, now));
  CHECK_FALSE(spared(listed("exited", "1800000005000"), Sweep::spare_bounded, now));
  CHECK_FALSE(spared(listed("running", nullptr), Sweep::spare_bounded, now));
  CHECK_FALSE(spared(listed("running", "soon"), Sweep::spare_bounded, now));
  CHECK_FALSE(spared(listed("running", "1800000005000"), Sweep::all, now));
  // The label says when a run's deadline falls on the wall clock.
  auto label = deadline_label(Clock::now() + 10s);
  REQUIRE(label);
  auto ms = std::stoll(label->substr(label->find('=') + 1));
  auto wall = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count();
  CHECK(ms > wall + 9000);
  CHECK(ms < wall + 11000);
  CHECK_FALSE(deadline_label(std::nullopt));
}

TEST_CASE("lifetime: a container's creator is gone when its pid is dead, a zombie or reused",
          "[unit][gc]") {
  auto labels_of = [](pid_t pid) {
    boost::json::object labels;
    for (const auto& l : owner_labels())
      labels[l.substr(0, l.find('='))] = l.substr(l.find('=') + 1);
    labels["cordon.pid"] = std::to_string(pid);
    return labels;
  };
  // This process: alive. Its labels with another start time: a reused pid.
  CHECK_FALSE(owner_gone(labels_of(::getpid())));
  auto reused = labels_of(::getpid());
  reused["cordon.pid_start"] = "1";
  CHECK(owner_gone(reused));
  // A child killed as a supervisor would be, not reaped yet: a zombie, and gone. Its labels
  // carry its own start time, as the supervisor's own containers would.
  pid_t child = ::fork();
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  REQUIRE(child > 0);
  std::this_thread::sleep_for(100ms);
  auto live = labels_of(child);
  live.erase("cordon.pid_start");
  std::ifstream stat("/proc/" + std::to_string(child) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  std::istringstream fields(text.substr(text.rfind(')') + 2));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
  }
  live["cordon.pid_start"] = field;
  CHECK_FALSE(owner_gone(live));  // both ways: alive, with its start time, is not gone
  ::kill(child, SIGKILL);
  std::this_thread::sleep_for(200ms);
  CHECK(owner_gone(live));  // a zombie
  ::waitpid(child, nullptr, 0);
  CHECK(owner_gone(live));  // reaped
  // Another host's container is never ours to judge.
  auto elsewhere = live;
  elsewhere["cordon.host"] = "another-host";
  CHECK_FALSE(owner_gone(elsewhere));
}

TEST_CASE("lifetime: a cordon killed mid-run leaves nothing running past the deadline",
          "[docker][gc][lifetime]") {
  if (!docker_ready()) return;
  TempDir ws;
  // The command would tick for ten minutes; the timeout is 5 s and cordon is SIGKILLed at once.
  auto [pid, started] = run_and_kill(
      ws, "5s", "while :; do date +%s > " + (ws / "tick") + "; sleep 0.2; done", ws / "tick");
  // Generous: the deadline plus 10 s. The waiter ends the container at the deadline itself.
  auto stopped = stopped_after(pid, started, 60s);
  INFO("the container stopped " << stopped.count() << " ms after cordon started");
  CHECK(stopped < 15s);
  // The command is dead, not merely detached: its ticks stopped at the deadline.
  struct stat before {};
  REQUIRE(::stat((ws / "tick").c_str(), &before) == 0);
  std::this_thread::sleep_for(1500ms);
  struct stat after {};
  REQUIRE(::stat((ws / "tick").c_str(), &after) == 0);
  CHECK(after.st_mtim.tv_sec == before.st_mtim.tv_sec);
  CHECK(after.st_mtim.tv_nsec == before.st_mtim.tv_nsec);
  // The stopped container is the dead cordon's: collected. Every docker run's first use of a
  // daemon collects such containers too, so a test running beside this one may have done it.
  auto left = containers_of(pid);
  REQUIRE(left.size() <= 1);
  if (!left.empty()) {
    auto gc = collect(ws);
    INFO(gc);
    CHECK(gc.find("removed container") != std::string::npos);
  }
  CHECK(containers_of(pid).empty());
}

TEST_CASE("lifetime: a command that ends before the deadline completes without cordon",
          "[docker][gc][lifetime]") {
  if (!docker_ready()) return;
  TempDir ws;
  // Both ways: the waiter kills at the deadline, not before it. cordon dies at about 1 s; the
  // command finishes its work at about 5 s, well within its 20 s.
  auto [pid, started] =
      run_and_kill(ws, "20s", "touch " + (ws / "began") + "; sleep 5; echo done > " + (ws / "done"),
                   ws / "began");
  // Another cordon's first run sweeps the containers of dead cordons: not this one yet.
  CHECK(another_run(ws) == 0);
  auto stopped = stopped_after(pid, started, 60s);
  INFO("the container stopped " << stopped.count() << " ms after cordon started");
  CHECK(read_file(ws / "done") == "done\n");
  CHECK(stopped < 15s);  // its pid 1 ended with the command, long before the deadline
  collect(ws);
  CHECK(containers_of(pid).empty());
}
