// The sandbox's command. Once the run is planned, cordon starts an entrant, which joins the
// keeper's namespaces (setns only moves the pid namespace of its children) and starts the
// command's process in them as cordon's own child (CLONE_PARENT), then leaves. The command's
// process takes the sandbox's identity, builds the tree, confines itself and executes the
// command. Both run in children of a possibly multi-threaded cordon, so they only read data
// prepared before the fork and make raw system calls; failures travel back to cordon as
// fixed-size records on a pipe.
#pragma once

#include <limits.h>
#include <signal.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "limits.hpp"
#include "ruleset.hpp"
#include "seccomp.hpp"

namespace cordon::landlock {

/// A record on the report pipe.
struct ChildReport {
  /// started: the keeper has made its namespaces and can be joined; pivoted: the new root is
  /// the mount namespace's root (it can be joined); built: the sandbox's file tree is complete;
  /// sealed: the blocked paths are masked and the host's root is detached from it.
  enum class Kind : std::uint32_t {
    setup_failed = 1,
    exec_failed = 2,
    started = 4,
    built = 5,
    sealed = 6,
    pivoted = 7
  };
  Kind kind = Kind::setup_failed;
  std::int32_t err = 0;     ///< errno of the failure
  char mechanism[32] = {};  ///< setup_failed: "mount namespace", "landlock", ...
  char detail[224] = {};    ///< what was being done, on which path
};
static_assert(sizeof(ChildReport) <= PIPE_BUF, "reports must be written atomically");

/// A report of `kind`: the errno, the mechanism, and what was being done (on `path`, if any).
ChildReport make_report(ChildReport::Kind kind, int err, const char* mechanism, const char* what,
                        const char* path = "") noexcept;

/// Writes `report` whole to a pipe or socket (retrying on EINTR).
void send_report(int fd, const ChildReport& report) noexcept;

/// Everything the command's process needs, prepared by cordon before the fork.
struct ChildSpec {
  // namespaces and identity
  const int* ns_fds = nullptr;    ///< the keeper's namespaces but the mount namespace, joined
  const int* ns_types = nullptr;  ///< in order by the entrant (user first); CLONE_NEW* of each
  int ns_count = 0;
  int mnt_ns_fd = -1;  ///< joined by the entrant once the keeper has switched root (pivoted)
  const int* cgroup_tasks = nullptr;  ///< v1: `tasks` descriptors written "0" to, first
  int cgroup_task_count = 0;
  int cgroup_leave_fd = -1;  ///< v1: written "0" to by the entrant before it exits (leave_fd)
  uid_t uid = 0;
  gid_t gid = 0;
  bool drop_groups = false;  ///< setgroups(0): only possible when cordon is root
  // the tree (the keeper builds it), working directory, Landlock, seccomp, limits
  int keeper_socket = -1;  ///< the keeper's word comes here once the tree is built
  const char* workspace = "";
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
  int report_fd = -1;            ///< close-on-exec: cordon reads end-of-file once the command runs
  int report_peer_fd = -1;       ///< cordon's end of that pipe, closed by the command's process
  pid_t* command_pid = nullptr;  ///< shared with cordon: the entrant puts the command's pid here
  char* stack = nullptr;         ///< for the command's process (it shares the entrant's memory)
  std::size_t stack_size = 0;
  /// -1: the entrant shares cordon's memory and waits until the command is executed. Else the
  /// entrant has memory of its own and leaves at once, and the command's process waits on this
  /// descriptor before it executes the command, until cordon has reaped the entrant: the
  /// entrant counts in the namespace's RLIMIT_NPROC until then.
  int reaped_fd = -1;
  /// The entrant loads the seccomp filter, which the command's process inherits: loading one
  /// takes ~0.1 ms, which the entrant spends while the keeper builds the tree. Only when the
  /// filter lets it start the command's process (it refuses new processes when the policy
  /// does); else the command's process loads it.
  bool filter_in_entrant = false;
  /// >= 0: the entrant shares cordon's descriptor table and was started before the set-up was
  /// complete (launch.hpp); it reads a byte here before it starts the command's process (end of
  /// file: cordon gave up).
  int proceed_fd = -1;
  pid_t cordon_pid = -1;  ///< with proceed_fd: the entrant dies with cordon (it is its parent)
};

/// The entrant: joins the v1 groups and the keeper's namespaces, starts the command's process
/// (identity, die-with-cordon, cgroup namespace, session, stdio; once the keeper has built the
/// tree: workspace, rules, limits, Landlock, no capabilities, seccomp and exec), stores its pid
/// once that has executed or failed, and exits.
[[noreturn]] void run_entrant(const ChildSpec& spec) noexcept;

}  // namespace cordon::landlock
