// The two forked processes of a supervised run (internal). Everything here runs after fork()
// in a copy of a possibly multi-threaded process: only async-signal-safe system calls, no
// allocation, no locks.
#pragma once

#include <linux/filter.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <time.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace cordon::detail {

/// The spec as raw pointers and plain values, ready before fork.
struct ChildPlan {
  const char* const* exec_paths;  ///< null-terminated
  char* const* argv;              ///< null-terminated
  char* const* envp;              ///< null-terminated
  const char* cwd;
  const std::pair<int, rlim_t>* rlimits;
  std::size_t rlimit_count;
  bool has_deadline;
  timespec deadline;  ///< CLOCK_MONOTONIC
  timespec grace;
  pid_t cordon;  ///< the process that forked the supervisor
  bool guard;    ///< install the seccomp guard of the supervisor (spawn_guard.hpp)
  const std::vector<sock_filter>* filter;  ///< installed last before exec; empty or null: none
  int namespaces;                          ///< CLONE_NEW* flags (sdk::ChildSpec::namespaces)
  const char* uid_map;                     ///< written by the supervisor with CLONE_NEWUSER
  const char* gid_map;
  bool deny_setgroups;  ///< "deny" to /proc/self/setgroups before the gid map
  bool has_user;        ///< switch to uid/gid before exec
  uid_t uid;
  gid_t gid;
};

/// Descriptors of the run, the command's ends (the supervisor closes every other one it
/// inherited). Every one is >= 3 and close-on-exec.
struct ChildFds {
  int in;      ///< the command's stdin
  int out;     ///< the command's stdout
  int err;     ///< the command's stderr
  int status;  ///< the supervisor's report
};

/// The supervisor's report, written once in a single write() just before it exits.
struct SupervisorReport {
  std::uint32_t magic;
  std::int32_t stage;  ///< sdk::ChildStage
  std::int32_t error;
  std::int32_t item;
  std::int32_t has_status;
  std::int32_t status;
  std::int32_t timed_out;
  std::int32_t leftovers;
  std::int64_t cpu_user_usec;  ///< of the whole tree (the supervisor is its subreaper)
  std::int64_t cpu_system_usec;
};
inline constexpr std::uint32_t kReportMagic = 0x63726431;  // "crd1"

/// Sent by cordon to the supervisor to pass SIGTERM to the whole command (StopToken terminate);
/// SIGTERM to the supervisor kills the command's tree at once (StopToken kill).
inline constexpr int kTerminateSignal = SIGUSR1;

/// Becomes the subreaper of the command's tree, runs it, enforces the deadline, kills every
/// descendant, reports and exits.
[[noreturn]] void run_supervisor(const ChildPlan& plan, const ChildFds& fds);

}  // namespace cordon::detail
