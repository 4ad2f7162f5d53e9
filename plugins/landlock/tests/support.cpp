// Helpers of the landlock backend's tests.
#include "support.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "reductions.hpp"

namespace cordon::landlock::test {

namespace fs = std::filesystem;

Policy base_policy(const std::string& workspace, const std::string& home) {
  Policy p;
  p.name = "test";
  p.filesystem.write = {workspace};
  (void)home;
  p.limits.timeout = std::chrono::seconds(30);
  return p;
}

Plan make_plan(const Policy& policy, const std::string& workspace, std::vector<std::string> argv,
               const std::string& home) {
  Plan plan;
  plan.policy = policy;
  plan.requirements = derive_requirements(policy);
  plan.argv = std::move(argv);
  plan.workspace = workspace;
  plan.env = {{"PATH", "/usr/local/bin:/usr/bin:/bin"}, {"LANG", "C.UTF-8"}};
  plan.host_home = home;
  if (policy.limits.timeout)
    plan.deadline = std::chrono::steady_clock::now() + *policy.limits.timeout;
  return plan;
}

LandlockBackend& backend() {
  // No state directory: the tests prove the host afresh, never from a cached probe.
  static LandlockBackend instance(BackendContext{"landlock", nullptr, {}});
  return instance;
}

bool is_root() { return ::geteuid() == 0; }

bool needs(bool ok, const std::string& why) {
  if (ok) return true;
  const char* ci = std::getenv("CI");
  if (ci && std::string(ci) == "true") FAIL("missing prerequisite: " << why);
  WARN("skipped: " << why);
  return false;
}

bool needs_root() {
  if (is_root()) return true;
  WARN("skipped: this case is about cordon running as root");
  return false;
}

bool reduced() { return !reductions().empty(); }

bool proven_here(std::string_view capability, bool ci_requires) {
  const auto& probe = backend().probe();
  if (probe.proves(capability)) return true;
  std::string why = std::string(capability) + " is not proven here: " + probe.evidence(capability);
  if (ci_requires && !reduced()) return needs(false, why);
  WARN(why << "; the refusal is tested instead");
  return false;
}

bool sandbox_available() {
  const auto& probe = backend().probe();
  return needs(probe.available, "landlock backend unavailable here: " + probe.reason);
}

RunResult run_sh(const Policy& policy, const std::string& workspace, const std::string& script,
                 CaptureSink& sink, const std::string& home) {
  Plan plan = make_plan(policy, workspace, {"/bin/sh", "-c", script}, home);
  return backend().run(plan, sink);
}

std::string HostOutcome::describe() const {
  std::string how =
      signal ? "killed by signal " + std::to_string(signal) : "exit " + std::to_string(exit_code);
  return how + (out.empty() ? "" : ", printed '" + out.substr(0, out.find('\n')) + "'");
}

HostOutcome run_on_host(const std::vector<std::string>& argv) {
  HostOutcome r;
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return r;
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(pipe_fds[1], STDOUT_FILENO);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  char buf[256];
  for (ssize_t n; (n = ::read(pipe_fds[0], buf, sizeof buf)) > 0;) r.out.append(buf, n);
  ::close(pipe_fds[0]);
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid) return r;
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

std::string probe_tool() { return LANDLOCK_PROBE_TOOL; }

std::string probe_tool_dir() { return fs::path(LANDLOCK_PROBE_TOOL).parent_path().string(); }

Policy with_tool(const TempDir& ws) {
  auto p = base_policy(ws.path(), "");
  p.filesystem.read.push_back(probe_tool_dir());
  return p;
}

void check_refused(const Policy& policy, const Policy& without, const TempDir& ws,
                   std::string_view capability) {
  CaptureSink sink;
  auto refused = backend().run(make_plan(policy, ws.path(), {"/bin/echo", "ran"}), sink);
  REQUIRE(refused.error);
  CHECK(refused.error->code() == "CRD1001");
  CHECK(refused.error->message().find(capability) != std::string::npos);
  CHECK(sink.out.empty());
  CaptureSink runs;
  auto allowed = backend().run(make_plan(without, ws.path(), {"/bin/echo", "ran"}), runs);
  INFO((allowed.error ? allowed.error->render() : std::string()));
  CHECK_FALSE(allowed.error);
  CHECK(runs.out == "ran\n");
}

ScopedEnv::ScopedEnv(const char* name, const char* value) : name_(name) {
  if (const char* old = std::getenv(name)) old_ = old;
  if (value)
    ::setenv(name, value, 1);
  else
    ::unsetenv(name);
}

ScopedEnv::~ScopedEnv() {
  if (old_)
    ::setenv(name_.c_str(), old_->c_str(), 1);
  else
    ::unsetenv(name_.c_str());
}

}  // namespace cordon::landlock::test
