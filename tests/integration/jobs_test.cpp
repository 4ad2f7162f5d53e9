// Background jobs through the real CLI on the landlock backend: start, output, stop, lost.
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/json.hpp>

#include <chrono>
#include <fstream>
#include <thread>

#include "cli.hpp"
#include "job_env.hpp"

using namespace itest;
using namespace std::chrono_literals;
namespace json = boost::json;

namespace itest {

bool landlock_usable(const std::string& policy_file) {
  auto r = run_cli({"run", "--backend", "landlock", "--policy", policy_file, "--", "/bin/true"});
  if (r.status == 0) return true;
  if (in_ci()) FAIL("the landlock backend cannot run here (CI=true): " << r.err);
  WARN("skipping: the landlock backend cannot run here: " << r.err);
  return false;
}

}  // namespace itest

namespace {

int free_port() {
  int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(s);
  return ntohs(a.sin_port);
}

std::string http_get(int port) {
  int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string reply;
  if (::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
    std::string req = "GET /hello.txt HTTP/1.0\r\nHost: localhost\r\n\r\n";
    (void)!::write(s, req.data(), req.size());
    char buf[4096];
    ssize_t n;
    while ((n = ::read(s, buf, sizeof buf)) > 0) reply.append(buf, static_cast<std::size_t>(n));
  }
  ::close(s);
  return reply;
}

}  // namespace

TEST_CASE("jobs: a dev server starts, serves the host, and stops", "[jobs][userns]") {
  int port = free_port();
  JobEnv env("[network]\nallow = false\nbind_ports = [" + std::to_string(port) + "]\n");
  if (!landlock_usable(env.policy)) return;
  std::ofstream(env.workspace + "/hello.txt") << "hello from the job\n";
  auto id =
      env.start({"python3", "-u", "-m", "http.server", std::to_string(port), "--bind", "127.0.0.1"},
                "--backend=landlock");
  REQUIRE(wait_for_output(env, id, "Serving HTTP", 20s));
  CHECK(http_get(port).find("hello from the job") != std::string::npos);
  CHECK(wait_for_output(env, id, "GET /hello.txt", 5s));
  auto st = env.status(id);
  CHECK(st.at("status").as_string() == "running");
  CHECK(st.at("backend").as_string() == "landlock");
  auto stop = run_cli({"job", "stop", id, "--state-dir", env.state, "--json"});
  INFO(stop.err);
  REQUIRE(stop.status == 0);
  auto stopped = json::parse(stop.out).as_object();
  CHECK(stopped.at("status").as_string() == "stopped");
  CHECK(http_get(port).empty());  // nothing listens any more
}

TEST_CASE("jobs: the exit code is known to a different cordon process", "[jobs][userns]") {
  JobEnv env;
  if (!landlock_usable(env.policy)) return;
  auto id = env.start({"sh", "-c", "echo out; echo err >&2; exit 3"});
  auto w = run_cli({"job", "wait", id, "--state-dir", env.state});
  CHECK(w.status == 3);
  auto st = env.status(id);
  CHECK(st.at("status").as_string() == "exited");
  CHECK(st.at("exit_code").as_int64() == 3);
  auto out = run_cli({"job", "output", id, "--state-dir", env.state});
  CHECK(out.out.find("out\n") != std::string::npos);
  CHECK(out.out.find("err\n") != std::string::npos);
  // Stopping a finished job reports its result and succeeds.
  auto stop = run_cli({"job", "stop", id, "--state-dir", env.state, "--json"});
  CHECK(stop.status == 0);
  CHECK(json::parse(stop.out).at("exit_code").as_int64() == 3);
}

TEST_CASE("jobs: a job cannot rewrite the policy file it was started with", "[jobs][userns]") {
  JobEnv env;
  // The policy in the workspace, which the job may write: a later run would load it.
  std::string in_ws = env.workspace + "/policy.toml";
  std::filesystem::copy_file(env.policy, in_ws);
  env.policy = in_ws;
  // Both writable by whoever the job runs as (as root: not root), so only the mask keeps it.
  std::filesystem::permissions(env.workspace, std::filesystem::perms::all);
  std::filesystem::permissions(
      in_ws, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write |
                 std::filesystem::perms::group_read | std::filesystem::perms::group_write |
                 std::filesystem::perms::others_read | std::filesystem::perms::others_write);
  if (!landlock_usable(env.policy)) return;
  const std::string before = slurp(in_ws);
  auto id = env.start({"sh", "-c",
                       "echo '[network]' >> policy.toml && echo rewrote; "
                       "echo x > mine.txt && echo wrote"});
  run_cli({"job", "wait", id, "--state-dir", env.state});
  auto out = run_cli({"job", "output", id, "--state-dir", env.state});
  INFO(out.out);
  CHECK(out.out.find("wrote\n") != std::string::npos);  // the workspace is writable
  CHECK(out.out.find("rewrote") == std::string::npos);
  CHECK(slurp(in_ws) == before);
}

TEST_CASE("jobs: a job that traps SIGTERM dies at the end of the grace", "[jobs][userns]") {
  JobEnv env;
  if (!landlock_usable(env.policy)) return;
  auto id = env.start({"sh", "-c", "trap '' TERM; echo ready; while :; do sleep 1; done"});
  REQUIRE(wait_for_output(env, id, "ready", 10s));
  auto begin = std::chrono::steady_clock::now();
  auto stop = run_cli({"job", "stop", id, "--grace", "1s", "--state-dir", env.state, "--json"});
  auto took = std::chrono::steady_clock::now() - begin;
  REQUIRE(stop.status == 0);
  auto st = json::parse(stop.out).as_object();
  CHECK(st.at("status").as_string() == "stopped");
  CHECK(st.at("signal").as_int64() == SIGKILL);
  CHECK(took >= 900ms);
  CHECK(took < 4s);  // the grace came with the signal: without it the supervisor waits 5 s
}

TEST_CASE("jobs: setsid and double-fork leave nothing behind after stop", "[jobs][userns]") {
  JobEnv env;
  if (!landlock_usable(env.policy)) return;
  auto marker = escape::unique_marker("cordon-job-escapee");
  auto id = env.start({"sh", "-c",
                       "setsid sh -c 'sleep 1000; :' " + marker + " & (sh -c 'sleep 1000; :' " +
                           marker + " &) ; echo ready; wait"});
  REQUIRE(wait_for_output(env, id, "ready", 10s));
  // The two escapees carry the marker as an argument of their own; the job's shell and its
  // supervisor carry it only inside a longer one, so they are not counted.
  for (int i = 0; i < 100 && escape::pids_with_argument(marker).size() < 2; ++i)
    std::this_thread::sleep_for(20ms);
  CHECK(escape::pids_with_argument(marker).size() == 2);
  auto stop = run_cli({"job", "stop", id, "--grace", "1s", "--state-dir", env.state});
  REQUIRE(stop.status == 0);
  CHECK(escape::pids_with_marker(marker).empty());
}

TEST_CASE("jobs: a job outlives the process that started it", "[jobs][userns]") {
  JobEnv env;
  if (!landlock_usable(env.policy)) return;
  // The starting process records the id and then dies by SIGKILL, as a crashed host would.
  std::string id_file = (env.scratch / "id").string();
  escape::SpawnOptions o;
  o.argv = {"/bin/sh",
            "-c",
            "\"$0\" job start --state-dir \"$1\" --policy \"$2\" --workspace \"$3\" -- sh -c "
            "'echo alive; sleep 1000' > \"$4\"; kill -9 $$",
            CORDON_CLI,
            env.state,
            env.policy,
            env.workspace,
            id_file};
  auto r = escape::run_process(o);
  CHECK(r.signal == SIGKILL);
  std::ifstream in(id_file);
  std::string id;
  std::getline(in, id);
  REQUIRE(id.size() == 25);
  REQUIRE(wait_for_output(env, id, "alive", 10s));
  CHECK(env.status(id).at("status").as_string() == "running");
  auto stop = run_cli({"job", "stop", id, "--grace", "1s", "--state-dir", env.state});
  CHECK(stop.status == 0);
  CHECK(env.status(id).at("status").as_string() == "stopped");
}

TEST_CASE("jobs: a supervisor killed with SIGKILL turns the job lost", "[jobs][userns]") {
  JobEnv env;
  if (!landlock_usable(env.policy)) return;
  auto marker = escape::unique_marker("cordon-job-lost");
  auto id = env.start({"sh", "-c", "echo up; sleep 1000; :", marker});
  REQUIRE(wait_for_output(env, id, "up", 10s));
  auto st = env.status(id);
  int pid = static_cast<int>(st.at("pid").as_int64());
  REQUIRE(pid > 1);
  ::kill(pid, SIGKILL);
  std::this_thread::sleep_for(300ms);
  CHECK(env.status(id).at("status").as_string() == "lost");
  // The sandbox died with its supervisor.
  for (int i = 0; i < 100 && !escape::pids_with_marker(marker).empty(); ++i)
    std::this_thread::sleep_for(20ms);
  CHECK(escape::pids_with_marker(marker).empty());
  auto list = run_cli({"job", "list", "--state-dir", env.state});
  CHECK(list.out.find(id) != std::string::npos);
  CHECK(list.err.find("supervisor is gone") != std::string::npos);
  auto w = run_cli({"job", "wait", id, "--state-dir", env.state});
  CHECK(w.status == 125);  // never success
}

TEST_CASE("jobs: unknown ids are CRD6001 from every verb", "[jobs]") {
  Scratch s;
  std::string state = (s / "state").string();
  for (std::string verb : {"output", "status", "wait", "stop", "remove"}) {
    auto r = run_cli({"job", verb, "j000000000000000000000000", "--state-dir", state});
    INFO(verb << ": " << r.err);
    CHECK(r.status == 2);
    CHECK(r.err.find("CRD6001") != std::string::npos);
    CHECK(r.err.find("no background job with id 'j000000000000000000000000'") != std::string::npos);
  }
  auto bad = run_cli({"job", "status", "../../etc", "--state-dir", state});
  CHECK(bad.err.find("CRD6001") != std::string::npos);
}

TEST_CASE("jobs: settings the backend does not accept refuse the start, no job is made",
          "[jobs][userns]") {
  if (!landlock_usable(JobEnv().policy)) return;
  JobEnv env("[backends.landlock]\nbogus = 1\n");
  auto r = run_cli({"job", "start", "--state-dir", env.state, "--policy", env.policy, "--workspace",
                    env.workspace, "--backend", "landlock", "--", "/bin/true"});
  CHECK(r.status == 2);  // job verbs refuse with 2, as for an unknown backend
  CHECK(r.err.find("CRD2015") != std::string::npos);
  CHECK(r.err.find("backends.landlock.bogus") != std::string::npos);
  CHECK(r.out.empty());
  auto list = run_cli({"job", "list", "--all", "--state-dir", env.state, "--json"});
  CHECK(json::parse(list.out).as_array().empty());
}

TEST_CASE("jobs: the log keeps the newest output within max_log_bytes", "[jobs][userns]") {
  JobEnv env("[limits]\nmax_log_bytes = 65536\n");
  if (!landlock_usable(env.policy)) return;
  auto id = env.start({"seq", "1", "200000"});
  auto w = run_cli({"job", "wait", id, "--state-dir", env.state, "--json"});
  REQUIRE(w.status == 0);
  auto st = json::parse(w.out).as_object();
  auto tail = run_cli({"job", "output", id, "--tail", "2", "--state-dir", env.state});
  CHECK(tail.out == "199999\n200000\n");
  // Never over the cap on disk, and exactly what was written is kept or counted as dropped.
  auto sz = std::filesystem::file_size(st.at("log").as_string().c_str());
  CHECK(sz <= 65536);
  std::ifstream log(st.at("log").as_string().c_str());
  std::string first;
  std::getline(log, first);
  std::uint64_t written = 0;  // seq 1 200000: each number and its newline
  for (std::uint64_t n = 1; n <= 200000; ++n) written += std::to_string(n).size() + 1;
  auto dropped = static_cast<std::uint64_t>(st.at("log_dropped_bytes").as_int64());
  CHECK(first == "[cordon: " + std::to_string(dropped) +
                     " bytes of older output dropped (limits.max_log_bytes)]");
  CHECK(dropped + (sz - first.size() - 1) == written);
}

TEST_CASE("jobs: output --tail on a 1 GB log reads only its end", "[jobs][userns][slow]") {
  JobEnv env("[limits]\nmax_log_bytes = 2147483648\n");
  if (!landlock_usable(env.policy)) return;
  auto id = env.start({"sh", "-c", "head -c 1073741824 /dev/zero | tr '\\0' 'x'; echo; seq 1 20"});
  auto w = run_cli({"job", "wait", id, "--state-dir", env.state, "--json"});
  REQUIRE(w.status == 0);
  auto log = json::parse(w.out).at("log").as_string();
  CHECK(std::filesystem::file_size(log.c_str()) > (1ull << 30));
  auto tail = run_cli({"job", "output", id, "--tail", "20", "--state-dir", env.state});
  std::string want;
  for (int i = 1; i <= 20; ++i) want += std::to_string(i) + "\n";
  CHECK(tail.out == want);
  // Reading the log would take over 1 GB; the tail stays small (ASan builds included).
  CHECK(tail.max_rss_kb < 256 * 1024);
  run_cli({"job", "remove", id, "--state-dir", env.state});
  CHECK_FALSE(std::filesystem::exists(log.c_str()));
}

TEST_CASE("jobs: 100 jobs started and stopped leave no process, fd or zombie", "[jobs][userns]") {
  JobEnv env;
  if (!landlock_usable(env.policy)) return;
  auto marker = escape::unique_marker("cordon-job-loop");
  auto count_fds = [] {
    int n = 0;
    if (DIR* d = ::opendir("/proc/self/fd")) {
      while (::readdir(d)) ++n;
      ::closedir(d);
    }
    return n;
  };
  int fds_before = count_fds();
  for (int i = 0; i < 100; ++i) {
    auto id = env.start({"sh", "-c", "sleep 1000; :", marker});
    auto stop = run_cli({"job", "stop", id, "--grace", "1s", "--state-dir", env.state});
    REQUIRE(stop.status == 0);
  }
  CHECK(escape::pids_with_marker(marker).empty());
  CHECK(count_fds() == fds_before);
  auto list = run_cli({"job", "list", "--state-dir", env.state});
  INFO(list.out << list.err);
  CHECK(list.out.empty());  // nothing running, nothing lost
  auto gc = run_cli({"job", "gc", "--state-dir", env.state});
  CHECK(gc.out == "removed 100 ended job(s)\n");
  // No zombie of ours: every child of this process was reaped.
  int zombies = 0;
  if (DIR* d = ::opendir("/proc")) {
    while (auto* e = ::readdir(d)) {
      std::ifstream stat(std::string("/proc/") + e->d_name + "/stat");
      std::string line;
      if (!std::getline(stat, line)) continue;
      auto close = line.rfind(')');
      if (close != std::string::npos && line.size() > close + 2 && line[close + 2] == 'Z') {
        std::istringstream rest(line.substr(close + 4));
        int ppid = 0;
        rest >> ppid;
        if (ppid == ::getpid()) ++zombies;
      }
    }
    ::closedir(d);
  }
  CHECK(zombies == 0);
}

TEST_CASE("jobs: limits.job_lifetime caps a job, and limits.timeout does not apply",
          "[jobs][userns]") {
  JobEnv capped("[limits]\ntimeout = \"1s\"\njob_lifetime = \"3s\"\n");
  if (!landlock_usable(capped.policy)) return;
  // timeout = 1s is ignored for jobs: at 1.5 s the job still runs; at 3 s its lifetime ends it
  // (1.5 s after the look, which a `cordon job status` on a slow machine takes well within).
  auto id = capped.start({"sh", "-c", "echo up; sleep 100"});
  std::this_thread::sleep_for(1500ms);
  CHECK(capped.status(id).at("status").as_string() == "running");
  auto w = run_cli({"job", "wait", id, "--state-dir", capped.state, "--json"});
  CHECK(w.status == 124);
  auto st = json::parse(w.out).as_object();
  CHECK(st.at("timed_out").as_bool());
  CHECK(st.at("duration_ms").as_int64() >= 2900);
}
