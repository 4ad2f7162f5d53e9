// Helpers of the docker backend's tests.
#include "support.hpp"

#include <boost/json/parse.hpp>

#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "api.hpp"
#include "container.hpp"
#include "process.hpp"

namespace cordon::docker::test {

namespace fs = std::filesystem;

namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

}  // namespace

Endpoint test_endpoint() { return resolve_endpoint(env_or("CORDON_TEST_DOCKER_SOCKET", ""), ""); }

int docker_cli(const std::string& args) {
  std::string host;
  if (auto socket = env_or("CORDON_TEST_DOCKER_SOCKET", ""); !socket.empty())
    host = "-H unix://" + socket + " ";
  escape::SpawnOptions o;
  o.argv = {"/bin/sh", "-c", "docker " + host + args + " >/dev/null"};
  return escape::run_process(o).status;
}

std::string test_image() { return env_or("CORDON_TEST_IMAGE", "cordon-test/busybox:2"); }

boost::json::object test_settings() {
  boost::json::object s{{"image", test_image()}};
  if (auto socket = env_or("CORDON_TEST_DOCKER_SOCKET", ""); !socket.empty()) s["socket"] = socket;
  return s;
}

std::unique_ptr<DockerBackend> backend_probed_at(const std::string& socket) {
  ::setenv("DOCKER_HOST", ("unix://" + socket).c_str(), 1);
  auto b = std::make_unique<DockerBackend>(
      BackendContext{"docker", nullptr, "/var/tmp/cordon-docker-test"});
  bool available = b->probe().available;
  ::unsetenv("DOCKER_HOST");
  REQUIRE(available);
  return b;
}

Policy base_policy(const std::string& workspace) {
  Policy p;
  p.name = "test";
  p.filesystem.write = {workspace};
  p.limits.timeout = std::chrono::seconds(60);
  return p;
}

Plan make_plan(const Policy& policy, const std::string& workspace, std::vector<std::string> argv) {
  Plan plan;
  plan.policy = policy;
  plan.requirements = derive_requirements(policy);
  plan.argv = std::move(argv);
  plan.workspace = workspace;
  plan.env = {{"PATH", "/usr/local/bin:/usr/bin:/bin"}, {"LANG", "C.UTF-8"}};
  plan.host_home = "/root";
  plan.settings = test_settings();
  if (policy.limits.timeout)
    plan.deadline = std::chrono::steady_clock::now() + *policy.limits.timeout;
  return plan;
}

DockerBackend& backend() {
  static DockerBackend* instance = [] {
    if (auto socket = env_or("CORDON_TEST_DOCKER_SOCKET", ""); !socket.empty())
      ::setenv("DOCKER_HOST", ("unix://" + socket).c_str(), 1);
    return new DockerBackend(BackendContext{"docker", nullptr, "/var/tmp/cordon-docker-test"});
  }();
  return *instance;
}

bool docker_ready() {
  std::string why;
  const auto& probe = backend().probe();
  if (!probe.available) {
    why = "docker daemon unavailable: " + probe.reason + " (scripts/docker-daemon start)";
  } else {
    try {
      Response r = http_request(test_endpoint(), "GET", "/images/" + test_image() + "/json");
      if (r.status != 200) why = "image '" + test_image() + "' missing (scripts/docker-image)";
    } catch (const std::exception& e) {
      why = e.what();
    }
  }
  if (why.empty()) return true;
  const char* ci = std::getenv("CI");
  if (ci && std::string(ci) == "true") FAIL("missing prerequisite: " << why);
  WARN("skipped: " << why);
  return false;
}

RunResult run_sh(const Policy& policy, const std::string& workspace, const std::string& script,
                 CaptureSink& sink) {
  return backend().run(make_plan(policy, workspace, {"/bin/sh", "-c", script}), sink);
}

std::string cli_policy(const cordon::testing::TempDir& dir) {
  std::string file = dir / "cordon-test-policy.toml";
  std::ofstream out(file);
  out << "version = 1\n[policy]\nname = \"docker-tests\"\nextends = \"standard\"\n"
         "[process]\nblocked_commands = [\"sudo\", \"doas\", \"pkexec\"]\n";
  return file;
}

std::string cli_config(const cordon::testing::TempDir& dir) {
  std::string file = dir / "config.toml";
  std::ofstream out(file);
  out << "[backends.docker]\nimage = \"" << test_image() << "\"\n";
  if (const char* s = std::getenv("CORDON_TEST_DOCKER_SOCKET"); s && *s)
    out << "socket = \"" << s << "\"\n";
  return file;
}

std::string reported(const RunResult& r, std::string_view capability) {
  for (const auto& e : r.report)
    if (e.capability == capability) return e.mechanism;
  return {};
}

std::vector<std::string> our_containers() { return containers_made_by(::getpid(), false); }

std::vector<std::string> containers_made_by(pid_t pid, bool running_only) {
  std::string filter = R"({"label":["cordon.pid=)" + std::to_string(pid) + R"("]})";
  Response r = http_request(test_endpoint(), "GET",
                            std::string("/containers/json?") + (running_only ? "" : "all=1&") +
                                "filters=" + url_encode(filter));
  std::vector<std::string> ids;
  auto parsed = boost::json::parse(r.body);
  for (const auto& c : parsed.as_array()) ids.emplace_back(c.as_object().at("Id").as_string());
  return ids;
}

std::optional<Attacker> attacker() {
  std::string why;
  const char* name = std::getenv("CORDON_TEST_USER");
  passwd* pw = ::getpwnam(name && *name ? name : "cordon-test");
  if (::geteuid() != 0)
    why = "the attack needs cordon to run as root";
  else if (pw == nullptr || pw->pw_uid == 0)
    why = "no unprivileged test user (scripts/test-user)";
  if (why.empty()) return Attacker{pw->pw_uid, pw->pw_gid};
  const char* ci = std::getenv("CI");
  if (ci && std::string(ci) == "true") FAIL("missing prerequisite: " << why);
  WARN("skipped: " << why);
  return std::nullopt;
}

std::optional<passwd> user_with_home() {
  const char* name = std::getenv("CORDON_TEST_USER");
  passwd* pw = ::getpwnam(name && *name ? name : "cordon-test");
  if (::geteuid() == 0 && pw != nullptr && std::filesystem::is_directory(pw->pw_dir)) return *pw;
  std::string why = "needs root and the test user with a home (scripts/test-user)";
  const char* ci = std::getenv("CI");
  if (ci && std::string(ci) == "true") FAIL(why << " (CI=true)");
  WARN("skipped: " << why);
  return std::nullopt;
}

void make_their_state(const passwd& user) {
  for (const char* dir : {".config", ".config/cordon", ".local", ".local/state",
                          ".local/state/cordon", ".cache", ".cache/cordon"}) {
    std::filesystem::path p = std::filesystem::path(user.pw_dir) / dir;
    if (::mkdir(p.c_str(), 0700) == 0) REQUIRE(::chown(p.c_str(), user.pw_uid, user.pw_gid) == 0);
  }
}

namespace {

// In a forked child: drops to `who` for good, or ends the child.
void become(const Attacker& who) {
  if (::setgroups(0, nullptr) != 0 || ::setgid(who.gid) != 0 || ::setuid(who.uid) != 0 ||
      ::getuid() == 0)
    ::_exit(126);
}

}  // namespace

int as_attacker(const Attacker& who, const std::function<int()>& fn) {
  pid_t pid = ::fork();
  if (pid == 0) {
    become(who);
    ::_exit(fn());
  }
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

AttackerLoop::AttackerLoop(const Attacker& who, std::function<void()> fn) {
  pid_ = ::fork();
  if (pid_ == 0) {
    become(who);
    for (;;) fn();
  }
  REQUIRE(pid_ > 0);
}

AttackerLoop::~AttackerLoop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
}

}  // namespace cordon::docker::test
