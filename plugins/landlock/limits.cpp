// Which mechanism enforces each limit. Pure, apart from apply_rlimits (child side).
#include "limits.hpp"

#include <algorithm>
#include <cerrno>

namespace cordon::landlock {

namespace {

constexpr std::uint64_t kMiB = 1024 * 1024;

const char* version_name(sdk::CgroupVersion v) {
  return v == sdk::CgroupVersion::v2 ? "cgroup v2" : "cgroup v1";
}

void memory(const Limits& l, const LimitsFacts& f, LimitsPlan& plan) {
  if (!l.memory_mb || !f.cgroups.memory) return;
  plan.cgroup.memory_bytes = *l.memory_mb * kMiB;
  bool v2 = f.cgroups.version == sdk::CgroupVersion::v2;
  plan.mechanisms.emplace_back("limit.memory",
                               std::string(version_name(f.cgroups.version)) + " " +
                                   (v2 ? "memory.max" : "memory.limit_in_bytes") + " = " +
                                   std::to_string(*l.memory_mb) + " MiB for the whole sandbox" +
                                   (v2 ? ", memory.swap.max = 0" : " (and swap, where accounted)"));
}

void processes(const Limits& l, const LimitsFacts& f, LimitsPlan& plan) {
  if (!l.max_processes) return;
  // The keeper (pid 1) stays outside the group; in the namespace's count it is one of the
  // sandbox's uid's tasks when cordon is not root.
  std::uint64_t tasks = *l.max_processes;
  std::string how;
  if (f.cgroups.pids) {
    plan.cgroup.max_tasks = tasks;
    how = std::string(version_name(f.cgroups.version)) + " pids.max = " + std::to_string(tasks);
  }
  if (f.nproc_per_userns) {
    std::uint64_t nproc = tasks + (f.keeper_shares_uid ? 1 : 0);
    plan.rlimits.push_back({RLIMIT_NPROC, nproc, nproc});
    how += std::string(how.empty() ? "" : "; ") + "RLIMIT_NPROC = " + std::to_string(nproc) +
           (f.keeper_shares_uid ? " (" + std::to_string(tasks) + " + the sandbox's pid 1)" : "") +
           " set inside the sandbox's own user namespace, where the kernel counts only its tasks";
  }
  if (!how.empty()) plan.mechanisms.emplace_back("limit.processes", how + " (threads count)");
}

void per_process(const Limits& l, LimitsPlan& plan) {
  if (l.max_open_files) {
    plan.rlimits.push_back({RLIMIT_NOFILE, *l.max_open_files, *l.max_open_files});
    plan.mechanisms.emplace_back("limit.files",
                                 "RLIMIT_NOFILE = " + std::to_string(*l.max_open_files));
  }
  if (l.cpu_seconds) {
    // SIGXCPU at the soft limit, SIGKILL one second later.
    plan.rlimits.push_back({RLIMIT_CPU, *l.cpu_seconds, *l.cpu_seconds + 1});
    plan.mechanisms.emplace_back("limit.cpu", "RLIMIT_CPU = " + std::to_string(*l.cpu_seconds) +
                                                  " s of CPU per process (SIGXCPU, then SIGKILL)");
  }
  if (l.max_file_size_mb) {
    rlim_t bytes = *l.max_file_size_mb * kMiB;
    plan.rlimits.push_back({RLIMIT_FSIZE, bytes, bytes});
    plan.mechanisms.emplace_back("limit.file_size",
                                 "RLIMIT_FSIZE = " + std::to_string(*l.max_file_size_mb) + " MiB");
  }
  plan.rlimits.push_back({RLIMIT_CORE, 0, 0});
}

void cpu_share(const Limits& l, const LimitsFacts& f, LimitsPlan& plan) {
  if (!l.cpu_percent || !f.cgroups.cpu) return;
  plan.cgroup.cpu_percent = *l.cpu_percent;
  std::string quota = std::to_string(*l.cpu_percent * 1000);
  plan.mechanisms.emplace_back("limit.cpu_share",
                               std::string(version_name(f.cgroups.version)) +
                                   (f.cgroups.version == sdk::CgroupVersion::v2
                                        ? " cpu.max = " + quota + " 100000"
                                        : " cpu.cfs_quota_us = " + quota + " per 100000 us") +
                                   " (" + std::to_string(*l.cpu_percent) + "% of one CPU)");
}

}  // namespace

LimitsPlan plan_limits(const Limits& limits, const LimitsFacts& facts) {
  LimitsPlan plan;
  memory(limits, facts, plan);
  processes(limits, facts, plan);
  per_process(limits, plan);
  cpu_share(limits, facts, plan);
  return plan;
}

int apply_rlimits(const std::vector<RlimitSpec>& limits, std::size_t* failed) noexcept {
  for (std::size_t i = 0; i < limits.size(); ++i) {
    auto resource = static_cast<__rlimit_resource>(limits[i].resource);
    rlimit current{};
    if (::getrlimit(resource, &current) != 0) current.rlim_max = RLIM_INFINITY;
    // Never above the inherited hard limit: raising it needs privilege, and lower is stricter.
    rlimit rl{std::min(limits[i].soft, current.rlim_max),
              std::min(limits[i].hard, current.rlim_max)};
    if (::setrlimit(resource, &rl) != 0) {
      *failed = i;
      return -errno;
    }
  }
  return 0;
}

}  // namespace cordon::landlock
