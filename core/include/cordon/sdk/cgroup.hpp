// The backend toolkit: control groups for a run's totals (memory, tasks, CPU share). cgroup v2
// when cordon can create a group in a subtree it owns (root, or a delegated user subtree);
// cgroup v1 memory, pids and cpu when root on a hybrid host; otherwise none (a backend then falls
// back to rlimits, or does not prove the limit). Find a base with probe_cgroups() in the probe,
// make one SandboxCgroup per run, put the command in it (clone_fd() or task_fds()), read
// peak_memory() and oom_kills() afterwards, kill_all() and let it go.
#pragma once

#include <sys/types.h>
#include <cordon/sdk/export.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace cordon::sdk {

/// Which cgroup version is in force for sandboxes.
enum class CgroupVersion { none, v1, v2 };

/// What the probe found, with evidence.
struct CgroupSupport {
  CgroupVersion version = CgroupVersion::none;
  bool memory = false;
  bool pids = false;
  bool cpu = false;
  std::string memory_dir;  ///< v1: where sandbox groups are made, per controller
  std::string pids_dir;
  std::string cpu_dir;
  std::string v2_dir;    ///< v2: the parent of sandbox groups (controllers enabled in it)
  std::string evidence;  ///< what is in force, or why nothing is
};

/// True when `proc_swaps` (the text of /proc/swaps) lists a swap area. Where swap is on but not
/// charged to cgroups (no memsw / memory.swap.max files), the probe proves no memory total.
CORDON_API bool lists_swap(const std::string& proc_swaps);

/// Making and removing groups: mkdir(2) and rmdir(2) on a cgroup filesystem, where the kernel
/// fills a new group with its interface files. Each returns 0 or an errno value.
struct CgroupOps {
  std::function<int(const std::string&)> make_group;
  std::function<int(const std::string&)> remove_group;
};

/// Where the cgroup code finds the kernel: what it reads of /proc, and how it makes groups. The
/// backend passes the running kernel's; the tests, a simulated tree laid out as a kernel's.
struct CgroupHost {
  std::string mountinfo;    ///< the text of /proc/self/mountinfo
  std::string self_cgroup;  ///< the text of /proc/self/cgroup
  std::string swaps;        ///< the text of /proc/swaps
  CgroupOps ops;
};

/// mkdir(2) (mode 0755) and rmdir(2).
CORDON_API const CgroupOps& kernel_cgroup_ops();

/// The running kernel's /proc/self/mountinfo, /proc/self/cgroup and /proc/swaps, with
/// kernel_cgroup_ops().
CORDON_API CgroupHost kernel_cgroup_host();

/// Finds a usable hierarchy by creating (and removing) a test group on the running kernel.
/// Never throws.
CORDON_API CgroupSupport probe_cgroups(uid_t euid) noexcept;
/// The same on `host`.
CORDON_API CgroupSupport probe_cgroups(uid_t euid, const CgroupHost& host) noexcept;

/// What a sandbox's group enforces; unset fields are not written.
struct CgroupLimits {
  std::optional<std::uint64_t> memory_bytes;
  std::optional<std::uint64_t> max_tasks;
  std::optional<std::uint64_t> cpu_percent;
  bool empty() const { return !memory_bytes && !max_tasks && !cpu_percent; }
};

/// The group (or groups, one per v1 controller) of one run; removed when destroyed.
class CORDON_API SandboxCgroup {
 public:
  /// Creates and configures the group. Throws cordon::Error (CRD1003).
  SandboxCgroup(const CgroupSupport& support, const CgroupLimits& limits,
                const CgroupOps& ops = kernel_cgroup_ops());
  ~SandboxCgroup();
  SandboxCgroup(const SandboxCgroup&) = delete;
  SandboxCgroup& operator=(const SandboxCgroup&) = delete;

  /// v2: a directory descriptor for clone3(CLONE_INTO_CGROUP); -1 with v1.
  int clone_fd() const noexcept { return dir_fd_; }
  /// v1: write-only descriptors of each group's `tasks` file (-1 where there is no group). The
  /// sandbox's entrant writes "0" to each to move itself: a single-threaded move of the caller
  /// skips the global lock that a move by pid takes (and its RCU grace period, 4-16 ms here).
  const int* task_fds() const noexcept { return task_fds_; }
  /// Peak memory of the group, when the kernel reports it.
  std::optional<std::uint64_t> peak_memory() const;
  /// How many processes the group's memory limit killed (v1 memory.oom_control, v2
  /// memory.events: `oom_kill`); nullopt without a memory group or where the kernel has no count.
  std::optional<std::uint64_t> oom_kills() const;
  /// Kills every process in the groups (v2: cgroup.kill where the kernel has it; else SIGKILL to
  /// each listed process, round after round, until none is left or `rounds` pass). True when the
  /// groups are empty.
  bool kill_all(int rounds = 100) noexcept;
  /// Removes the groups if no task is left in them, without waiting; true when they are gone.
  bool remove_if_empty() noexcept;

 private:
  void create(const CgroupSupport& support, const CgroupLimits& limits);
  /// Removes the groups, waiting up to `attempts` ms for the last tasks to leave.
  bool remove(int attempts = 200) noexcept;

  CgroupVersion version_;
  CgroupOps ops_;
  std::string memory_;  ///< group directories (v2: memory_ is the one group)
  std::string pids_;
  std::string cpu_;
  int dir_fd_ = -1;
  int task_fds_[3] = {-1, -1, -1};  ///< v1: memory, pids, cpu
};

}  // namespace cordon::sdk
