// Helpers of the landlock backend's tests.
#include "support.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

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

bool sandbox_available() {
  const auto& probe = backend().probe();
  return needs(probe.available, "landlock backend unavailable here: " + probe.reason);
}

RunResult run_sh(const Policy& policy, const std::string& workspace, const std::string& script,
                 CaptureSink& sink, const std::string& home) {
  Plan plan = make_plan(policy, workspace, {"/bin/sh", "-c", script}, home);
  return backend().run(plan, sink);
}

std::string probe_tool() { return LANDLOCK_PROBE_TOOL; }

std::string probe_tool_dir() { return fs::path(LANDLOCK_PROBE_TOOL).parent_path().string(); }

Policy with_tool(const TempDir& ws) {
  auto p = base_policy(ws.path(), "");
  p.filesystem.read.push_back(probe_tool_dir());
  return p;
}

}  // namespace cordon::landlock::test
