// The SDK's cgroup v2 path (discovery, a run's group, its counters, kill_all, removal) on a
// simulated cgroup2 tree: this host kind is v1-hybrid, and most users' hosts are v2
// (plugins/landlock/README.md, "cgroup v2 by hand", for the check on a real one).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include <catch2/catch.hpp>
#include <cordon/sdk/cgroup.hpp>
#include <cordon/sdk/error.hpp>

#include "cgroup2_sim.hpp"

using namespace cordon::sdk;
using namespace cordon::sdk::test;

namespace {

bool needs_root() {
  if (::geteuid() == 0) return true;
  WARN("skipped: handing a subtree to another uid takes root");
  return false;
}

// A uid that owns nothing here: the simulated delegation's user, when root can hand it over.
constexpr uid_t kUser = 4242;

const std::string kService = "/user.slice/user-4242.slice/user@4242.service";
const std::string kScope = kService + "/app.slice/term.scope";

// systemd's layout: slices enable the controllers for their children; the user's service is
// delegated to the user (Delegate=yes), and the shell runs in a scope beneath it.
void systemd_layout(Cgroup2Sim& sim, const std::string& service_controllers, uid_t user) {
  sim.write(sim.root(), "cgroup.subtree_control", "cpu io memory pids\n");
  sim.add_groups(kService, service_controllers);
  sim.add_groups(kScope, "");
  for (const std::string& g : {kService, kService + "/app.slice", kScope}) sim.delegate(g, user);
}

bool exists(const std::string& path) { return std::filesystem::exists(path); }

}  // namespace

TEST_CASE("cgroup v2: a delegated user subtree is found and prepared", "[cgroups]") {
  if (!needs_root()) return;  // handing a subtree to another uid takes root
  Cgroup2Sim sim;
  systemd_layout(sim, "cpu memory pids", kUser);
  auto s = probe_cgroups(kUser, sim.host(kScope));
  INFO(s.evidence);
  REQUIRE(s.version == CgroupVersion::v2);
  // The highest group the user owns, not the root-owned slice above it.
  CHECK(s.v2_dir == sim.dir(kService) + "/cordon");
  CHECK(s.memory);
  CHECK(s.pids);
  CHECK(s.cpu);
  CHECK(enabled_controllers(Cgroup2Sim::read(s.v2_dir, "cgroup.subtree_control")) ==
        std::vector<std::string>{"memory", "pids", "cpu"});
  // The test groups of the probe are gone: cordon/ holds nothing but its own files.
  for (const auto& entry : std::filesystem::directory_iterator(s.v2_dir))
    CHECK_FALSE(entry.is_directory());
}

TEST_CASE("cgroup v2: a subtree without cpu delegated gives no CPU share", "[cgroups]") {
  if (!needs_root()) return;
  Cgroup2Sim sim;
  systemd_layout(sim, "memory pids", kUser);
  auto s = probe_cgroups(kUser, sim.host(kScope));
  REQUIRE(s.version == CgroupVersion::v2);
  CHECK(s.memory);
  CHECK(s.pids);
  CHECK_FALSE(s.cpu);
}

TEST_CASE("cgroup v2: no delegation, no group", "[cgroups]") {
  Cgroup2Sim sim;
  systemd_layout(sim, "cpu memory pids", ::geteuid());
  // A uid that owns none of the groups (the tree belongs to the test's own user).
  auto s = probe_cgroups(::geteuid() + 1000, sim.host(kScope));
  CHECK(s.version == CgroupVersion::none);
  CHECK(s.evidence.find("cgroup v2: no subtree delegated to uid " +
                        std::to_string(::geteuid() + 1000)) != std::string::npos);
  CHECK_FALSE(exists(sim.dir(kService) + "/cordon"));
}

TEST_CASE("cgroup v2: a hierarchy without the memory controller is not used", "[cgroups]") {
  Cgroup2Sim sim("cpu io hugetlb pids");
  auto s = probe_cgroups(::geteuid(), sim.host("/"));
  CHECK(s.version == CgroupVersion::none);
  CHECK(s.evidence.find("lacks the memory and pids controllers") != std::string::npos);
}

TEST_CASE("cgroup v2: swap that is not charged makes the memory limit no total", "[cgroups]") {
  Cgroup2Sim sim;
  sim.set_swap_accounting(false);
  systemd_layout(sim, "cpu memory pids", ::geteuid());
  auto s = probe_cgroups(::geteuid(), sim.host(kScope, true));
  REQUIRE(s.version == CgroupVersion::v2);
  CHECK_FALSE(s.memory);
  CHECK(s.pids);
  CHECK(s.evidence.find("no memory.swap.max") != std::string::npos);
}

TEST_CASE("cgroup v2: a sandbox's group is limited, counted and removed", "[cgroups]") {
  Cgroup2Sim sim;
  // As its own user the walk climbs to the highest group it owns; as root, the root's is used.
  systemd_layout(sim, "cpu memory pids", ::geteuid());
  auto s = probe_cgroups(::geteuid(), sim.host(kScope));
  REQUIRE(s.version == CgroupVersion::v2);
  CHECK(s.v2_dir == (::geteuid() == 0 ? sim.root() : sim.dir("/user.slice")) + "/cordon");
  CgroupLimits limits;
  limits.memory_bytes = 64ull << 20;
  limits.max_tasks = 20;
  limits.cpu_percent = 50;
  std::string group;
  {
    SandboxCgroup cg(s, limits, sim.host(kScope).ops);
    CHECK(cg.clone_fd() >= 0);  // the sandbox is born in it (CLONE_INTO_CGROUP)
    for (int i = 0; i < 3; ++i) CHECK(cg.task_fds()[i] == -1);
    for (const auto& entry : std::filesystem::directory_iterator(s.v2_dir))
      if (entry.is_directory()) group = entry.path();
    REQUIRE_FALSE(group.empty());
    CHECK(Cgroup2Sim::read(group, "memory.max") == "67108864");
    CHECK(Cgroup2Sim::read(group, "memory.swap.max") == "0");
    CHECK(Cgroup2Sim::read(group, "pids.max") == "20");
    CHECK(Cgroup2Sim::read(group, "cpu.max") == "50000 100000");
    // The kernel's counters, as a run that hit its limit leaves them.
    CHECK(cg.oom_kills() == std::optional<std::uint64_t>(0));
    // Reclaim at the limit (page cache pushed out) counts in "max", and kills nothing.
    Cgroup2Sim::write(group, "memory.events",
                      "low 0\nhigh 0\nmax 41\noom 0\noom_kill 0\noom_group_kill 0\n");
    CHECK(cg.oom_kills() == std::optional<std::uint64_t>(0));
    Cgroup2Sim::write(group, "memory.events",
                      "low 0\nhigh 0\nmax 41\noom 2\noom_kill 2\noom_group_kill 0\n");
    Cgroup2Sim::write(group, "memory.peak", "66998272\n");
    CHECK(cg.oom_kills() == std::optional<std::uint64_t>(2));
    CHECK(cg.peak_memory() == std::optional<std::uint64_t>(66998272));
    // A task still in the group keeps it; once it has left, the group goes.
    Cgroup2Sim::write(group, "cgroup.procs", "4711\n");
    CHECK_FALSE(cg.remove_if_empty());
    CHECK(exists(group));
    Cgroup2Sim::write(group, "cgroup.procs", "");
  }
  CHECK_FALSE(exists(group));
}

TEST_CASE("cgroup v2: a limit the group cannot take fails the run (CRD1003)", "[cgroups]") {
  Cgroup2Sim sim;
  // cpu is offered by the root but not enabled for cordon's parent: no cpu.max in the group.
  sim.write(sim.root(), "cgroup.subtree_control", "memory pids\n");
  auto s = probe_cgroups(::geteuid(), sim.host("/"));
  REQUIRE(s.version == CgroupVersion::v2);
  CHECK_FALSE(s.cpu);
  CgroupLimits limits;
  limits.cpu_percent = 50;
  s.cpu = true;  // a support claimed wrongly: the write fails, nothing is half made
  try {
    SandboxCgroup cg(s, limits, sim.host("/").ops);
    FAIL("a group without cpu.max was accepted");
  } catch (const cordon::Error& e) {
    CHECK(e.code() == cordon::code::kIsolationFailed);
    CHECK(std::string(e.what()).find("cpu.max") != std::string::npos);
  }
  for (const auto& entry : std::filesystem::directory_iterator(s.v2_dir))
    CHECK_FALSE(entry.is_directory());
}

TEST_CASE("cgroup: kill_all ends every process the group lists, and only those", "[cgroups]") {
  Cgroup2Sim sim;
  systemd_layout(sim, "cpu memory pids", ::geteuid());
  auto s = probe_cgroups(::geteuid(), sim.host(kScope));
  REQUIRE(s.version == CgroupVersion::v2);
  auto start_sleep = [] {
    pid_t pid = ::fork();
    if (pid == 0) {
      ::execl("/bin/sleep", "sleep", "30", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    return pid;
  };
  pid_t inside = start_sleep(), outside = start_sleep();
  REQUIRE(inside > 0);
  REQUIRE(outside > 0);
  {
    SandboxCgroup cg(s, {}, sim.host(kScope).ops);
    std::string group;
    for (const auto& entry : std::filesystem::directory_iterator(s.v2_dir))
      if (entry.is_directory()) group = entry.path();
    REQUIRE_FALSE(group.empty());
    Cgroup2Sim::write(group, "cgroup.procs", std::to_string(inside) + "\n");
    CHECK(cg.kill_all());
    int status = 0;
    REQUIRE(::waitpid(inside, &status, 0) == inside);
    CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));
    CHECK(::waitpid(outside, &status, WNOHANG) == 0);  // not listed: still running
    Cgroup2Sim::write(group, "cgroup.procs", "");
  }
  ::kill(outside, SIGKILL);
  ::waitpid(outside, nullptr, 0);
}
