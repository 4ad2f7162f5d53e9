#include "support.hpp"

#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>

namespace cordon::ssh::test {

const Fixture& fixture() {
  static Fixture f = [] {
    Fixture out;
    out.dir = CORDON_SSH_FIXTURE;
    std::ifstream ports(out.dir + "/ports");
    for (int p; ports >> p;) out.ports.push_back(p);
    std::ifstream user(out.dir + "/user");
    user >> out.user;
    return out;
  }();
  return f;
}

bool ready() {
  if (fixture().ports.size() == 2) return true;
  const char* ci = std::getenv("CI");
  if (ci && std::string(ci) == "true") FAIL("the sshd fixture is not running (scripts/sshd)");
  WARN("skipped: the sshd fixture is not running (ctest starts it: scripts/sshd start DIR)");
  return false;
}

boost::json::object settings(int n) {
  const Fixture& f = fixture();
  return {{"host", "127.0.0.1"},
          {"port", f.ports.at(static_cast<std::size_t>(n))},
          {"user", f.user},
          {"identity", f.dir + "/client_key"},
          {"known_hosts", f.dir + "/known_hosts"},
          {"workspace", "/tmp"}};
}

Policy shell_policy(std::chrono::milliseconds timeout) {
  Policy p;
  p.name = "ssh-test";
  p.filesystem.read_host = true;
  p.filesystem.write_host = true;
  p.filesystem.home = HomeMode::host;
  p.network.allow = true;
  p.limits.timeout = timeout;
  return p;
}

Plan make_plan(const Policy& policy, std::vector<std::string> argv, int n) {
  Plan plan;
  plan.policy = policy;
  plan.requirements = derive_requirements(policy);
  plan.argv = std::move(argv);
  plan.workspace = "/tmp";
  plan.env = {{"PATH", "/usr/local/bin:/usr/bin:/bin"}, {"LANG", "C.UTF-8"}};
  plan.settings = settings(n);
  if (policy.limits.timeout)
    plan.deadline = std::chrono::steady_clock::now() + *policy.limits.timeout;
  return plan;
}

namespace {

void give_to_login(const std::filesystem::path& p) {
  const passwd* pw = ::getpwnam(fixture().user.c_str());
  if (pw && ::geteuid() == 0) REQUIRE(::chown(p.c_str(), pw->pw_uid, pw->pw_gid) == 0);
}

}  // namespace

RemoteWorkspace::RemoteWorkspace() {
  static int made = 0;
  dir = std::filesystem::path("/tmp") /
        ("cordon-ssh-ws-" + std::to_string(::getpid()) + "-" + std::to_string(++made));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directory(dir);
  give_to_login(dir);
  ::chmod(dir.c_str(), 0755);
}

RemoteWorkspace::~RemoteWorkspace() {
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

void RemoteWorkspace::put(const std::string& name, const std::string& text) const {
  std::ofstream(dir / name) << text;
  ::chmod((dir / name).c_str(), 0644);
  give_to_login(dir / name);
}

SshBackend& backend() {
  static auto* instance = new SshBackend(BackendContext{"ssh", nullptr, "/var/tmp"});
  return *instance;
}

std::vector<std::string> processes_matching(const std::string& pattern) {
  std::vector<std::string> out;
  FILE* p = ::popen(("pgrep -af -- '" + pattern + "'").c_str(), "r");
  if (!p) return out;
  char line[4096];
  while (std::fgets(line, sizeof line, p)) {
    std::string l = line;
    if (l.find("pgrep") == std::string::npos && l.find("sh -c pgrep") == std::string::npos)
      out.push_back(l);
  }
  ::pclose(p);
  return out;
}

std::string marker(const char* what) {
  return std::string("cordon-ssh-") + what + "-" + std::to_string(::getpid());
}

bool gone_within(const std::string& pattern, std::chrono::milliseconds limit) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (processes_matching(pattern).empty()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return processes_matching(pattern).empty();
}

void kill_cordon_mid_run(const std::string& extra_config, const std::string& policy_toml,
                         const std::string& workspace, const std::string& m) {
  cordon::testing::TempDir dir("cordon-ssh-cli-", ::geteuid());
  std::ofstream(dir / "config.toml")
      << "[backends.ssh]\nhost = \"127.0.0.1\"\nport = " << fixture().ports.at(0) << "\nuser = \""
      << fixture().user << "\"\nidentity = \"" << fixture().dir << "/client_key\"\nknown_hosts = \""
      << fixture().dir << "/known_hosts\"\n"
      << extra_config;
  std::ofstream(dir / "policy.toml") << policy_toml;
  std::string config = dir / "config.toml", policy = dir / "policy.toml";
  std::string script = "setsid sh -c 'sleep 301; : " + m + "' & sleep 302; : " + m;
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::execl(CORDON_CLI, CORDON_CLI, "run", "--config", config.c_str(), "--backend", "ssh",
            "--policy", policy.c_str(), "--workspace", workspace.c_str(), "--", "sh", "-c",
            script.c_str(), nullptr);
    ::_exit(127);
  }
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  std::string escapee = "^sh -c sleep 301; : " + m;  // the setsid() one, started last
  while (processes_matching(escapee).empty() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  bool running = processes_matching(escapee).size() == 1;
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  REQUIRE(running);
}

std::string code_of(const RunResult& r) { return r.error ? r.error->code() : ""; }

}  // namespace cordon::ssh::test
