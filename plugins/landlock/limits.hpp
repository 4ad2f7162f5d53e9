// Resource limits of a run: which mechanism enforces each one. Memory, task count and CPU
// share are totals for the whole sandbox, so they need a cgroup; the task count can also be
// bounded by RLIMIT_NPROC set inside the sandbox's own user namespace, where the kernel
// (>= 5.14) counts only the sandbox's tasks. Open files, file size, CPU seconds and core dumps
// are per-process rlimits.
#pragma once

#include <cordon/sdk/policy.hpp>

#include <sys/resource.h>

#include <cstdint>
#include <string>
#include <vector>

#include <cordon/sdk/cgroup.hpp>

namespace cordon::landlock {

/// One rlimit, applied to the command before exec.
struct RlimitSpec {
  int resource = 0;
  rlim_t soft = 0;
  rlim_t hard = 0;
  bool operator==(const RlimitSpec&) const = default;
};

/// What the probe established about limits.
struct LimitsFacts {
  sdk::CgroupSupport cgroups;
  bool nproc_per_userns = false;   ///< RLIMIT_NPROC counted per user namespace (proven)
  bool keeper_shares_uid = false;  ///< cordon is not root: the keeper (pid 1) has the sandbox's
                                   ///< uid in its namespace and counts in RLIMIT_NPROC
};

/// The limits of one run.
struct LimitsPlan {
  std::vector<RlimitSpec> rlimits;
  sdk::CgroupLimits cgroup;  ///< empty: no cgroup is made
  /// One line per limit in force, e.g. "limit.memory: cgroup v1 memory.limit_in_bytes = ...".
  std::vector<std::pair<std::string, std::string>> mechanisms;
};

/// Plans the limits. Pure. Limits no mechanism can enforce are left out (the probe did not
/// prove them, so Backend::run refused the plan already).
LimitsPlan plan_limits(const Limits& limits, const LimitsFacts& facts);

/// Child side: applies `limits`; returns 0 or -errno with `failed` set to the index.
int apply_rlimits(const std::vector<RlimitSpec>& limits, std::size_t* failed) noexcept;

}  // namespace cordon::landlock
