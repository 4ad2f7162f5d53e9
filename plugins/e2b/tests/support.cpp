#include "support.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <thread>

#include "http.hpp"

namespace cordon::e2b::test {

namespace json = boost::json;

namespace {

std::string read_line(const std::string& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

json::value call(const std::string& method, const std::string& path, const std::string& body) {
  Request r{method, url() + path, {"Content-Type: application/json"}, body};
  Response a = send(r);
  REQUIRE(a.status / 100 == 2);
  if (a.body.empty()) return {};
  return json::parse(a.body);
}

std::string slurp(int fd) {
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  return out;
}

}  // namespace

std::string url() {
  return "http://127.0.0.1:" + read_line(std::string(CORDON_E2B_FIXTURE) + "/port");
}

std::string key() { return read_line(std::string(CORDON_E2B_FIXTURE) + "/key"); }

bool ready() {
  if (!read_line(std::string(CORDON_E2B_FIXTURE) + "/port").empty()) {
    ::setenv("CORDON_E2B_TEST_KEY", key().c_str(), 1);
    return true;
  }
  const char* ci = std::getenv("CI");
  if (ci && std::string(ci) == "true") FAIL("the E2B stand-in is not running (mock-fixture)");
  WARN("skipped: the E2B stand-in is not running (ctest starts it: mock-fixture start DIR)");
  return false;
}

json::object settings(const json::object& extra) {
  json::object s{{"api_url", url()}, {"envd_url", url()}, {"api_key_env", "CORDON_E2B_TEST_KEY"}};
  for (const auto& kv : extra) s[kv.key()] = kv.value();
  return s;
}

Policy basic_policy(std::chrono::milliseconds timeout) {
  Policy p;
  p.name = "e2b-test";
  p.limits.timeout = timeout;
  return p;
}

Plan make_plan(const Policy& policy, std::vector<std::string> argv, const std::string& workspace,
               const json::object& extra_settings) {
  Plan plan;
  plan.policy = policy;
  for (auto& w : plan.policy.filesystem.write)
    if (w == "{workspace}") w = workspace;
  plan.requirements = derive_requirements(plan.policy);
  plan.argv = std::move(argv);
  plan.workspace = workspace;
  plan.env = {{"PATH", "/usr/local/bin:/usr/bin:/bin"}, {"LANG", "C.UTF-8"}};
  plan.settings = settings(extra_settings);
  if (policy.limits.timeout)
    plan.deadline = std::chrono::steady_clock::now() + *policy.limits.timeout;
  return plan;
}

std::unique_ptr<E2bBackend> make_backend() {
  return std::make_unique<E2bBackend>(BackendContext{"e2b", nullptr, "/var/tmp"});
}

json::object state() { return call("GET", "/_mock/state", "").as_object(); }

std::vector<std::string> alive_sandboxes() {
  std::vector<std::string> out;
  json::object st = state();
  for (const auto& s : st["sandboxes"].as_array())
    out.emplace_back(s.as_object().at("sandboxID").as_string());
  return out;
}

long processes_alive() {
  long n = 0;
  json::object st = state();
  for (const auto& s : st["sandboxes"].as_array())
    n += s.as_object().at("processes_alive").to_number<long>();
  return n;
}

void set_faults(const json::object& faults) {
  call("POST", "/_mock/faults", json::serialize(faults));
}

void reset() { call("POST", "/_mock/reset", "{}"); }

bool no_sandbox_within(std::chrono::milliseconds limit) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (!alive_sandboxes().empty()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

std::string code_of(const RunResult& r) { return r.error ? r.error->code() : ""; }

std::string write_config(const std::string& dir, const std::string& extra) {
  std::string path = dir + "/config.toml";
  std::ofstream(path) << "[backends.e2b]\napi_url = \"" << url() << "\"\nenvd_url = \"" << url()
                      << "\"\napi_key_env = \"CORDON_E2B_TEST_KEY\"\n"
                      << extra;
  return path;
}

std::string write_policy(const std::string& dir) {
  std::string path = dir + "/policy.toml";
  std::ofstream(path) << "version = 1\n[limits]\ntimeout = \"60s\"\n";
  return path;
}

Cli cli(const std::vector<std::string>& args) {
  int out[2], err[2];
  REQUIRE(::pipe(out) == 0);
  REQUIRE(::pipe(err) == 0);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    std::vector<char*> argv{const_cast<char*>(CORDON_CLI)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(CORDON_CLI, argv.data());
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(err[1]);
  Cli c;
  std::thread t([&] { c.err = slurp(err[0]); });
  c.out = slurp(out[0]);
  t.join();
  ::close(out[0]);
  ::close(err[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  c.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return c;
}

}  // namespace cordon::e2b::test
