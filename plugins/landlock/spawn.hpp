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

#include "child_io.hpp"
#include "limits.hpp"
#include "ruleset.hpp"
#include "seccomp.hpp"

namespace cordon::landlock {

/// The keeper's namespaces the entrant joins with setns, the mount namespace aside: user, pid,
/// IPC, UTS and, when the keeper made one, network.
inline constexpr int kJoinedNamespaces = 5;

/// Everything the entrant and the command's process need, prepared by cordon before the fork.
struct ChildSpec {
  // The entrant: the groups, the namespaces, the filter.
  int cgroup_tasks[3] = {-1, -1, -1};    ///< v1: `tasks` descriptors written "0" to (-1: none)
  int ns_fds[kJoinedNamespaces] = {};    ///< joined in order (user first)
  int ns_types[kJoinedNamespaces] = {};  ///< CLONE_NEW* of each
  int ns_count = 0;
  int mnt_ns_fd = -1;      ///< joined once the keeper has switched root (pivoted)
  int keeper_socket = -1;  ///< the keeper's word comes here (pivoted, built, sealed)
  /// A keeper prepared ahead: its tree was built and sealed before the run, and its word read.
  bool tree_sealed = false;
  const SeccompProgram* filter = nullptr;
  /// The entrant loads the filter, which the command's process inherits, when the filter lets
  /// it start that process; under proc.no_subprocess the command's process loads it last.
  bool filter_in_entrant = false;
  // The command's process: identity, the tree, Landlock, limits.
  uid_t uid = 0;
  gid_t gid = 0;
  bool drop_groups = false;  ///< setgroups(0): only possible when cordon is root
  const char* workspace = "";
  int ruleset_fd = -1;
  const RulesetPlan* ruleset = nullptr;
  const std::vector<RlimitSpec>* rlimits = nullptr;
  // The command.
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  const std::vector<std::string>* candidates = nullptr;  ///< paths execve tries, in order
  int stdin_fd = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
  int report_fd = -1;       ///< close-on-exec: cordon reads end-of-file once the command runs
  int report_peer_fd = -1;  ///< cordon's end of that pipe, closed by the entrant
  // Set by start_command (launch.hpp).
  /// The command's end of a socket pair, close-on-exec: cordon sends a byte once it has reaped
  /// the entrant, which the command's process reads before execve; cordon then waits for its
  /// end-of-file, the command executed (or its process gone).
  int handshake_fd = -1;
  pid_t* command_pid = nullptr;  ///< a shared page: the entrant puts the command's pid here
  char* stack = nullptr;         ///< for the command's process, on the entrant's memory
  std::size_t stack_size = 0;
};

/// The entrant, cloned by cordon (on cordon's memory, or forked into a v2 group; its own
/// descriptor table either way): joins the v1 groups and the keeper's namespaces, makes the
/// cgroup namespace, joins the mount namespace once the keeper has switched root, loads the
/// filter, and starts the command's process as cordon's child (CLONE_PARENT, on the entrant's
/// memory); stores its pid and exits. The command's process takes the identity, sets itself up
/// once the keeper has built the tree, waits until the keeper has sealed it and cordon has
/// reaped the entrant (which counts in the sandbox's pids group and RLIMIT_NPROC until then),
/// and executes the command.
[[noreturn]] void run_entrant(const ChildSpec& spec) noexcept;

}  // namespace cordon::landlock
