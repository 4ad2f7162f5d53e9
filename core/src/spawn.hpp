// A supervised child process (internal): fork/exec with argv, never a shell, and a supervisor
// that is the child subreaper of the whole tree, so that every descendant — setsid() or not —
// is killed at the deadline and when the command exits.
//
//   cordon ──fork──► supervisor (PR_SET_CHILD_SUBREAPER, owns the deadline)
//                        └─fork──► command (process-group leader, rlimits, execve)
//
// The command's stdout and stderr are pipes read by the caller's thread; the supervisor
// reports how the command ended through a third pipe and exits last.
#pragma once

#include <sys/resource.h>
#include <time.h>
#include <cordon/backend.hpp>
#include <cordon/export.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cordon::detail {

/// Everything the child processes need, prepared before fork: after fork they only make
/// async-signal-safe system calls.
struct SpawnSpec {
  std::vector<std::string> exec_paths;  ///< argv[0] resolved against the granted PATH, in order
  std::vector<std::string> argv;
  std::vector<std::string> env;  ///< "NAME=value"
  std::string cwd;
  std::vector<std::pair<int, rlim_t>> rlimits;  ///< resource, soft = hard limit
  std::optional<std::string> stdin_data;        ///< nullopt: /dev/null
  std::optional<std::chrono::steady_clock::time_point> deadline;
  std::chrono::milliseconds grace{1000};  ///< SIGTERM to SIGKILL at the deadline
  bool guard = true;  ///< forbid the command to signal its supervisor (spawn_guard.hpp)
  std::shared_ptr<StopToken> stop;  ///< polled every 100 ms while the command runs
};

/// Where the child failed before the command started.
enum class SpawnStage { none = 0, chdir = 1, rlimit = 2, exec = 3, fork = 4, setup = 5, guard = 6 };

/// How a supervised run ended.
struct SpawnOutcome {
  SpawnStage failed_stage = SpawnStage::none;  ///< none: the command was executed
  int error = 0;                               ///< errno of the failed stage
  int failed_item = 0;                         ///< for rlimit: the resource
  std::optional<int> wait_status;              ///< the command's status, as from waitpid
  bool timed_out = false;
  int leftovers = 0;            ///< descendants still alive after the command exited, all killed
  double cpu_user_seconds = 0;  ///< user time of the whole tree
  double cpu_system_seconds = 0;
  bool stopped = false;              ///< the stop token asked for a kill and the tree was killed
  std::optional<std::string> fault;  ///< the supervisor itself failed
};

/// PATH search for `program` in `path_var` (an empty entry is the working directory); a name
/// with a slash is returned alone. Pure.
CORDON_API std::vector<std::string> exec_candidates(const std::string& program,
                                                    const std::string& path_var);

/// Runs `spec`, streaming output to `sink` as it arrives. When this returns, no process of the
/// command is alive. Never throws.
CORDON_API SpawnOutcome spawn_supervised(const SpawnSpec& spec, OutputSink& sink);

/// True when everything the deadline relies on works here — a child subreaper that can list its
/// children through /proc, and the guard that keeps a command from signalling its supervisor —
/// tested in a throwaway child process.
CORDON_API bool supervision_supported(std::string& evidence);

}  // namespace cordon::detail
