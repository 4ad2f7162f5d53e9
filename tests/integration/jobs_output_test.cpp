// Background jobs through the real CLI: output that loses no line, polling by offset in one
// call, a job's timeout, and job JSON that speaks as run JSON does.
#include <boost/json.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>

#include "cli.hpp"
#include "job_env.hpp"

using namespace itest;
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

json::object parse_object(const escape::Exit& r) {
  INFO(r.err);
  REQUIRE(r.status == 0);
  return json::parse(r.out).as_object();
}

// `job wait` with a ceiling against a hang only.
json::object wait_for_end(JobEnv& env, const std::string& id) {
  auto w = run_cli({"job", "wait", id, "--timeout", "120s", "--state-dir", env.state, "--json"});
  auto o = json::parse(w.out).as_object();
  REQUIRE(o.at("status").as_string() != "running");
  return o;
}

std::string text_of(const json::object& o, const char* key) {
  auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

}  // namespace

TEST_CASE("jobs output: a line longer than the tail's window is shown cut, with a marker",
          "[jobs][userns]") {
  JobEnv env;
  if (!landlock_usable(env.policy)) return;
  auto id = env.start({"python3", "-c", "print('A'); print('B' * 70000); print('C')"});
  wait_for_end(env, id);
  auto tail = run_cli({"job", "output", id, "--tail", "3", "--state-dir", env.state});
  INFO(tail.err);
  REQUIRE(tail.status == 0);
  CHECK(tail.out.find("[cordon: the next line is cut") != std::string::npos);
  CHECK(tail.out.find(std::string(60000, 'B') + "\nC\n") != std::string::npos);
  // --since 0 reads every byte of it.
  auto all = run_cli({"job", "output", id, "--since", "0", "--state-dir", env.state});
  CHECK(all.out == "A\n" + std::string(70000, 'B') + "\nC\n");
  CHECK(all.err.find("next offset 70005") != std::string::npos);
  auto bad = run_cli({"job", "output", id, "--since", "70006", "--state-dir", env.state});
  CHECK(bad.status == 2);
  CHECK(bad.err.find("CRD4007") != std::string::npos);
  auto negative = run_cli({"job", "output", id, "--since", "-1", "--state-dir", env.state});
  CHECK(negative.status == 2);
  CHECK(negative.err.find("error[CRD4007]: bad --since '-1'") != std::string::npos);
}

TEST_CASE("jobs output: polling with --json --since is one process per poll and loses nothing",
          "[jobs][userns]") {
  JobEnv env;
  if (!landlock_usable(env.policy)) return;
  auto id = env.start({"sh", "-c", "i=0; while [ $i -lt 200 ]; do echo line $i; i=$((i+1)); done"});
  std::string collected;
  std::uint64_t offset = 0;
  json::object last;
  for (int polls = 0; polls < 2000; ++polls) {
    last = parse_object(run_cli({"job", "output", id, "--since", std::to_string(offset), "--json",
                                 "--state-dir", env.state}));
    collected += text_of(last, "output");
    CHECK(last.at("next_offset").as_int64() >= static_cast<std::int64_t>(offset));
    offset = static_cast<std::uint64_t>(last.at("next_offset").as_int64());
    // The state is read before the output: once it says ended, the output was all there.
    if (last.at("status").as_string() != "running" && !last.at("more").as_bool()) break;
    std::this_thread::sleep_for(20ms);
  }
  std::ostringstream expected;
  for (int i = 0; i < 200; ++i) expected << "line " << i << "\n";
  CHECK(collected == expected.str());
  CHECK(last.at("status").as_string() == "exited");
  CHECK(last.at("exit_code").as_int64() == 0);
  CHECK(last.at("signal").is_null());
  CHECK(last.at("dropped_bytes").as_int64() == 0);
}

TEST_CASE("jobs timeout: a job's --timeout or request timeout is its lifetime", "[jobs][userns]") {
  JobEnv env;
  if (!landlock_usable(env.policy)) return;
  auto marker = escape::unique_marker("cordon-job-timeout");
  auto id = env.start({"sh", "-c", "echo up; sleep 1000; :", marker}, "--timeout=1s");
  auto end = wait_for_end(env, id);
  CHECK(end.at("timed_out").as_bool());
  CHECK(end.at("exit_code").is_null());
  bool noted = false;
  for (const auto& n : end.at("notes").as_array())
    noted |= std::string(n.as_string()).find("timed out") != std::string::npos;
  CHECK(noted);
  CHECK(escape::pids_with_marker(marker).empty());
  auto list = run_cli({"job", "list", "--all", "--state-dir", env.state});
  CHECK(list.out.find("(timed out)") != std::string::npos);

  std::string request = (env.scratch / "request.json").string();
  std::ofstream(request) << R"({"argv": ["sleep", "1000"], "timeout": "1s"})";
  auto r = run_cli({"job", "start", "--state-dir", env.state, "--policy", env.policy, "--workspace",
                    env.workspace, "--request", request});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(wait_for_end(env, r.out.substr(0, 25)).at("timed_out").as_bool());
}

TEST_CASE("jobs timeout: a job's timeout never lengthens limits.job_lifetime", "[jobs]") {
  JobEnv env("[limits]\njob_lifetime = \"10s\"\n");
  auto cli = run_cli({"job", "start", "--state-dir", env.state, "--policy", env.policy,
                      "--workspace", env.workspace, "--timeout", "20s", "--", "true"});
  CHECK(cli.status == 2);
  CHECK(cli.err.find("CRD4007") != std::string::npos);
  CHECK(cli.err.find("longer than limits.job_lifetime (10s)") != std::string::npos);
  std::string request = (env.scratch / "request.json").string();
  std::ofstream(request) << R"({"argv": ["true"], "timeout": "20s"})";
  auto req = run_cli({"job", "start", "--state-dir", env.state, "--policy", env.policy,
                      "--workspace", env.workspace, "--request", request});
  CHECK(req.status == 2);
  CHECK(req.err.find("CRD4006") != std::string::npos);
  // Nothing was started.
  CHECK(run_cli({"job", "list", "--all", "--state-dir", env.state}).out.empty());
}

TEST_CASE("jobs json: exit_code and signal are null where they do not apply, as in run JSON",
          "[jobs][userns]") {
  JobEnv env;
  if (!landlock_usable(env.policy)) return;
  auto clean = env.start({"true"});
  auto done = wait_for_end(env, clean);
  CHECK(done.at("exit_code").as_int64() == 0);
  CHECK(done.at("signal").is_null());
  CHECK(done.at("error").is_null());
  auto run = parse_object(run_cli(
      {"run", "--json", "--policy", env.policy, "--workspace", env.workspace, "--", "true"}));
  CHECK(run.at("signal").is_null());

  auto sleeper = env.start({"sh", "-c", "echo up; exec sleep 1000"});
  REQUIRE(wait_for_output(env, sleeper, "up", 20s));
  auto running = env.status(sleeper);
  CHECK(running.at("exit_code").is_null());
  CHECK(running.at("signal").is_null());
  auto stopped = parse_object(
      run_cli({"job", "stop", sleeper, "--grace", "5s", "--state-dir", env.state, "--json"}));
  CHECK(stopped.at("exit_code").is_null());
  CHECK(stopped.at("signal").is_int64());
}

TEST_CASE("jobs list: one line per job, whatever the argv holds", "[jobs][userns]") {
  JobEnv env;
  if (!landlock_usable(env.policy)) return;
  auto id = env.start({"sh", "-c", "sleep 1000\necho \x1b[2J\\ done", "two\nlines"});
  auto list = run_cli({"job", "list", "--state-dir", env.state});
  INFO(list.out);
  REQUIRE(list.status == 0);
  CHECK(std::count(list.out.begin(), list.out.end(), '\n') == 1);
  CHECK(list.out.find(id) == 0);
  CHECK(list.out.find("sleep 1000\\necho \\x1b[2J\\\\ done two\\nlines") != std::string::npos);
  CHECK(list.out.find('\x1b') == std::string::npos);
}
