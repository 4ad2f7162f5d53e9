// The sandbox's processes: its init (pid 1 of the new pid namespace), which finishes the
// isolation and waits, and the command it starts. Everything here runs in children of a
// possibly multi-threaded cordon, so it only reads data prepared before the clone and makes
// raw system calls; failures travel back to cordon as fixed-size records on a pipe.
#pragma once

#include <limits.h>
#include <signal.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "layout.hpp"
#include "limits.hpp"
#include "mounts.hpp"
#include "ruleset.hpp"
#include "seccomp.hpp"

namespace cordon::landlock {

/// A record on the report pipe.
struct ChildReport {
  /// started: the init has the command and forwards SIGTERM to it from now on.
  enum class Kind : std::uint32_t { setup_failed = 1, exec_failed = 2, exited = 3, started = 4 };
  Kind kind = Kind::setup_failed;
  std::int32_t err = 0;     ///< errno of the failure
  std::int32_t status = 0;  ///< exited: the command's wait status
  char mechanism[32] = {};  ///< setup_failed: "mount namespace", "landlock", ...
  char detail[224] = {};    ///< what was being done, on which path
};
static_assert(sizeof(ChildReport) <= PIPE_BUF, "reports must be written atomically");

/// Everything the init and the command need, prepared by cordon before the clone.
struct ChildSpec {
  // identity
  int go_fd = -1;              ///< read end; cordon writes a byte when each step below is done
  bool wait_for_maps = false;  ///< cordon (root) writes the maps: wait before anything else
  const int* cgroup_tasks = nullptr;  ///< v1: `tasks` descriptors the init writes "0" to, first
  int cgroup_task_count = 0;
  bool self_maps = true;     ///< the init writes its own maps (cordon is not root)
  const char* uid_map = "";  ///< the maps the init writes for itself
  const char* gid_map = "";
  uid_t uid = 0;
  gid_t gid = 0;
  bool drop_groups = false;  ///< setgroups(0): only possible when cordon is root
  // namespaces
  bool unshare_cgroup = true;
  bool loopback = false;  ///< bring up "lo" in the fresh network namespace
  // file tree, Landlock, seccomp, limits
  const Layout* layout = nullptr;
  SourceTrees trees;
  int ruleset_fd = -1;
  const RulesetPlan* ruleset = nullptr;
  const SeccompProgram* filter = nullptr;
  const std::vector<RlimitSpec>* rlimits = nullptr;
  // the command
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  const std::vector<std::string>* candidates = nullptr;  ///< paths execve tries, in order
  int stdin_fd = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
  int report_fd = -1;
  char* stack = nullptr;  ///< for the command's vfork-style clone
  std::size_t stack_size = 0;
};

/// Sent by cordon to the init at the deadline: kill everything, reap it, exit.
inline constexpr int kStopSignal = SIGUSR1;

/// The init: identity, die-with-cordon, namespaces, tree, rules, then the command; waits for
/// it, reports its status and exits (the kernel then kills whatever is left in the namespace).
[[noreturn]] void run_init(const ChildSpec& spec) noexcept;

/// The candidates execve tries for argv[0]: itself when it has a '/', else each directory of
/// `search_path` joined with it.
std::vector<std::string> exec_candidates(const std::string& argv0, const std::string& search_path);

}  // namespace cordon::landlock
