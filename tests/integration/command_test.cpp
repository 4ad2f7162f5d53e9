// Command strings, shell modes, untrusted arguments and JSON requests through the real CLI.
#include <signal.h>
#include <sys/stat.h>

#include <boost/json.hpp>

#include <chrono>
#include <fstream>
#include <thread>

#include "cli.hpp"

using namespace itest;
namespace json = boost::json;

namespace {

// A policy with the given process.shell, no cgroup limits (so any user can run it).
std::string policy_with_shell(Scratch& s, const std::string& shell) {
  std::string file = (s / ("shell-" + shell + ".toml")).string();
  std::ofstream(file) << "version = 1\n[policy]\nname = \"shell-test\"\n[process]\nshell = \""
                      << shell << "\"\n[env]\npass = [\"CI_MARK\"]\n";
  return file;
}

std::vector<std::string> run_args(Scratch& s, const std::string& policy,
                                  std::vector<std::string> rest) {
  std::vector<std::string> a = {"run", "--policy", policy, "--workspace", s.dir.string()};
  a.insert(a.end(), rest.begin(), rest.end());
  return a;
}

}  // namespace

TEST_CASE("command: a string without operators is split, never given to a shell",
          "[command][cli]") {
  Scratch s;
  auto policy = policy_with_shell(s, "off");
  if (!landlock_usable(policy)) return;
  auto r = run_cli(run_args(s, policy, {"--command", "printf '%s|' 'a b' \"c d\" e"}));
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.out == "a b|c d|e|");
}

TEST_CASE("command: shell = off refuses an operator, naming it, and nothing runs",
          "[command][cli]") {
  Scratch s;
  auto policy = policy_with_shell(s, "off");
  auto r = run_cli(run_args(s, policy, {"--command", "echo x > made.txt"}));
  CHECK(r.status == 125);
  CHECK(r.err.find("CRD4001") != std::string::npos);
  CHECK(r.err.find("'>'") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(s / "made.txt"));
}

TEST_CASE("command: shell = sandboxed runs the string under /bin/sh in the sandbox",
          "[command][cli]") {
  Scratch s;
  auto policy = policy_with_shell(s, "sandboxed");
  if (!landlock_usable(policy)) return;
  auto r = run_cli(run_args(s, policy, {"--json", "--command", "echo one | tr a-z A-Z"}));
  INFO(r.out << r.err);
  CHECK(r.status == 0);
  auto o = json::parse(r.out).as_object();
  CHECK(o.at("stdout").as_string() == "ONE\n");
  CHECK(o.at("backend").as_string() == "landlock");
  // Never on `none`: the shell needs a backend that contains it.
  auto none = run_cli(run_args(s, policy, {"--backend", "none", "--command", "echo hi | cat"}));
  CHECK(none.status == 125);
  CHECK(none.err.find("CRD1001") != std::string::npos);
  CHECK(none.err.find("proc.isolate") != std::string::npos);
}

TEST_CASE("command: CORDON_SHELL makes the mode stricter, never looser", "[command][cli]") {
  Scratch s;
  auto sandboxed = policy_with_shell(s, "sandboxed");
  auto off = policy_with_shell(s, "off");
  auto stricter =
      run_cli(run_args(s, sandboxed, {"--command", "echo a | cat"}), {{"CORDON_SHELL", "off"}});
  CHECK(stricter.status == 125);
  CHECK(stricter.err.find("CRD4001") != std::string::npos);
  auto looser =
      run_cli(run_args(s, off, {"--command", "echo a | cat"}), {{"CORDON_SHELL", "unsafe"}});
  CHECK(looser.status == 125);
  CHECK(looser.err.find("CRD4001") != std::string::npos);
  auto bad = run_cli(run_args(s, off, {"--command", "true"}), {{"CORDON_SHELL", "perhaps"}});
  CHECK(bad.status == 125);
  CHECK(bad.err.find("CRD4007") != std::string::npos);
}

TEST_CASE("command: a JSON request with untrusted arguments", "[command][cli]") {
  Scratch s;
  auto policy = policy_with_shell(s, "off");
  if (!landlock_usable(policy)) return;
  std::string ok = (s / "ok.json").string();
  std::ofstream(ok)
      << R"({"argv": ["sh", "-c", "echo \"$0:$CI_MARK\"", {"untrusted": "safe-value"}],)"
      << R"( "policy": ")" << policy << R"(", "workspace": ")" << s.dir.string()
      << R"(", "env": {"CI_MARK": "granted"}, "stdin": "ignored"})";
  auto r = run_cli({"run", "--request", ok, "--json"});
  INFO("stderr: " << r.err << "\nstdout: " << r.out);
  CHECK(r.status == 0);
  CHECK(json::parse(r.out).at("stdout").as_string() == "safe-value:granted\n");

  std::string flag = (s / "flag.json").string();
  std::ofstream(flag) << R"({"argv": ["ls", {"untrusted": "--color=always"}], "policy": ")"
                      << policy << R"("})";
  auto refused = run_cli({"run", "--request", flag, "--json"});
  CHECK(refused.status == 125);
  auto err = json::parse(refused.out).at("error").as_object();
  CHECK(err.at("code").as_string() == "CRD4002");
  CHECK(std::string(err.at("message").as_string()).find("argument 1") != std::string::npos);

  std::string env = (s / "env.json").string();
  std::ofstream(env) << R"({"argv": ["true"], "policy": ")" << policy
                     << R"(", "env": {"SECRET": "x"}})";
  auto env_refused = run_cli({"run", "--request", env, "--json"});
  CHECK(env_refused.status == 125);
  CHECK(json::parse(env_refused.out).at("error").at("code").as_string() == "CRD4006");

  auto garbage = run_cli({"run", "--request", "-", "--json"});
  CHECK(garbage.status == 125);
  CHECK(json::parse(garbage.out).at("error").at("code").as_string() == "CRD4006");
}

TEST_CASE("command: a run cannot rewrite the request file, nor the policy file, it came from",
          "[command][cli]") {
  Scratch s;
  auto policy = policy_with_shell(s, "off");  // in the workspace, as the request file is
  if (!landlock_usable(policy)) return;
  std::string file = (s / "req.json").string();
  std::ofstream(file) << R"({"argv": ["sh", "-c", "echo x >> req.json && echo rewrote; )"
                      << R"(echo x >> shell-off.toml && echo loosened; echo x > mine.txt && )"
                      << R"(echo wrote"], "policy": ")" << policy << R"(", "workspace": ")"
                      << s.dir.string() << R"("})";
  // Writable by whoever the command runs as (as root: not root), so only the masks keep them.
  namespace fs = std::filesystem;
  fs::permissions(s.dir, fs::perms::all);
  const auto rw = fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                  fs::perms::group_write | fs::perms::others_read | fs::perms::others_write;
  for (const auto& f : {file, policy}) fs::permissions(f, rw);
  const std::string request = slurp(file), rules = slurp(policy);
  auto r = run_cli({"run", "--request", file, "--json"});
  INFO("stderr: " << r.err << "\nstdout: " << r.out);
  REQUIRE(r.status == 0);
  std::string out(json::parse(r.out).at("stdout").as_string());
  CHECK(out.find("wrote\n") != std::string::npos);  // the workspace is writable
  CHECK(out.find("rewrote") == std::string::npos);
  CHECK(out.find("loosened") == std::string::npos);
  CHECK(slurp(file) == request);
  CHECK(slurp(policy) == rules);
}

TEST_CASE("command: after a literal '--' an untrusted value reaches the program as an operand",
          "[command][cli]") {
  Scratch s;
  auto policy = policy_with_shell(s, "off");
  if (!landlock_usable(policy)) return;
  std::ofstream(s / "notes.txt") << "use -e to give a pattern\n";
  auto request = [&](const std::string& argv) {
    std::string file = (s / "grep.json").string();
    std::ofstream(file) << R"({"argv": )" << argv << R"(, "policy": ")" << policy
                        << R"(", "workspace": ")" << s.dir.string() << R"("})";
    return run_cli({"run", "--request", file, "--json"});
  };
  auto found = request(R"(["grep", "-n", "--", {"untrusted": "-e"}, "notes.txt"])");
  INFO("stderr: " << found.err << "\nstdout: " << found.out);
  CHECK(found.status == 0);
  CHECK(json::parse(found.out).at("stdout").as_string() == "1:use -e to give a pattern\n");
  auto refused = request(R"(["grep", "-n", {"untrusted": "-e"}, "notes.txt"])");
  CHECK(refused.status == 125);
  CHECK(json::parse(refused.out).at("error").at("code").as_string() == "CRD4002");
}

TEST_CASE("command: a leading assignment is refused under shell = off, and runs in a shell",
          "[command][cli]") {
  Scratch s;
  auto off = policy_with_shell(s, "off");
  auto refused = run_cli(run_args(s, off, {"--command", "CI_MARK=set printenv CI_MARK"}));
  CHECK(refused.status == 125);
  CHECK(refused.err.find("CRD4001") != std::string::npos);
  CHECK(refused.err.find("variable assignment 'CI_MARK=...'") != std::string::npos);
  auto sandboxed = policy_with_shell(s, "sandboxed");
  if (!landlock_usable(sandboxed)) return;
  auto ran = run_cli(run_args(s, sandboxed, {"--command", "CI_MARK=set printenv CI_MARK"}));
  INFO(ran.err);
  CHECK(ran.status == 0);
  CHECK(ran.out == "set\n");
}

TEST_CASE("command: an inline policy in a request", "[command][cli]") {
  Scratch s;
  auto probe_policy = policy_with_shell(s, "off");
  if (!landlock_usable(probe_policy)) return;
  std::string req = (s / "inline.json").string();
  std::ofstream(req) << R"({"command": "echo inline", "workspace": ")" << s.dir.string()
                     << R"(", "policy": {"version": 1, "policy": {"name": "inline"}}})";
  auto r = run_cli({"run", "--request", req, "--json"});
  INFO(r.out << r.err);
  CHECK(r.status == 0);
  CHECK(json::parse(r.out).at("stdout").as_string() == "inline\n");
  std::ofstream(req)
      << R"({"command": "true", "policy": {"version": 1, "limits": {"memry_mb": 1}}})";
  auto bad = run_cli({"run", "--request", req, "--json"});
  CHECK(bad.status == 125);
  CHECK(json::parse(bad.out).at("error").at("code").as_string() == "CRD2003");
}

TEST_CASE("command: a run still waiting for its request on a pipe ends on SIGTERM",
          "[command][cli]") {
  Scratch s;
  auto policy = policy_with_shell(s, "off");
  if (!landlock_usable(policy)) return;
  std::string fifo = (s / "request.fifo").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // A request on a pipe is read when it comes (as `--request <(...)` gives one).
  escape::SpawnOptions writer;
  writer.argv = {"/bin/sh", "-c",
                 "printf '%s' '{\"argv\": [\"echo\", \"piped\"], \"policy\": \"" + policy +
                     "\", \"workspace\": \"" + s.dir.string() + "\"}' > " + fifo};
  escape::Process feeding(writer);
  auto fed = run_cli({"run", "--request", fifo});
  INFO(fed.err);
  CHECK(fed.status == 0);
  CHECK(fed.out == "piped\n");
  feeding.wait();
  // With no writer, cordon waits as any reader does, and a signal ends it.
  escape::SpawnOptions o;
  o.argv = {CORDON_CLI, "run", "--request", fifo};
  o.deadline = std::chrono::milliseconds(20000);
  escape::Process waiting(o);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ::kill(waiting.pid(), SIGTERM);
  auto ended = waiting.wait();
  CHECK_FALSE(ended.harness_killed);
  CHECK(ended.signal == SIGTERM);
}
