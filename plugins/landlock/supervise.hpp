// Cordon's side of a run: starting the command's process in the keeper's namespaces, streaming
// its output, the deadline, and collecting how it ended. When supervise() returns, no process
// of the sandbox is alive.
#pragma once

#include <cordon/stop_token.hpp>
#include <memory>

#include <cordon/backend.hpp>

#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "fd.hpp"
#include "keeper.hpp"
#include "spawn.hpp"

namespace cordon::landlock {

/// The sandbox, once its command's process is started.
struct Started {
  pid_t pid = -1;  ///< the command's process (pid 2 inside), cordon's child; -1 if none
  UniqueFd pidfd;
  Keeper keeper;           ///< pid 1 inside: killing it kills everything in the sandbox
  int entrant_status = 0;  ///< without a command's process: how the entrant ended
};

/// Runs the entrant (in the v2 cgroup `cgroup_fd` when >= 0; it joins v1 groups itself) and
/// waits for it: the command's process is then running or has failed (its report is on the
/// pipe). `counts_entrant`: the sandbox's processes are limited by RLIMIT_NPROC in its user
/// namespace, where the entrant would count for a moment after the command has started. The
/// keeper must have been awaited. Throws cordon::Error (CRD1003); the keeper is discarded if
/// anything fails.
Started start_command(ChildSpec spec, Keeper keeper, int cgroup_fd, bool counts_entrant);

/// Kills the sandbox and reaps its processes: for a failure in cordon after start_command
/// returned.
void abandon(Started& started) noexcept;

/// Cordon's ends of the sandbox's pipes.
struct ParentEnds {
  UniqueFd out;     ///< the command's stdout
  UniqueFd err;     ///< the command's stderr
  UniqueFd report;  ///< ChildReport records
  UniqueFd input;   ///< the command's stdin, when the plan gives data
};

/// How the sandbox ended.
struct Outcome {
  bool exited = false;                 ///< the command's process was reaped
  int wait_status = 0;                 ///< its status
  bool timed_out = false;              ///< the deadline passed and the sandbox was killed
  bool stopped = false;                ///< a StopToken asked for the kill, and it was done
  std::optional<ChildReport> failure;  ///< setup_failed or exec_failed, if any
  rusage usage{};                      ///< of the command, the keeper and all it reaped
};

/// Pumps output to `sink` as it arrives, feeds `input`, kills the sandbox at `deadline` or
/// when its command has exited, and reaps the command's process. The keeper is killed but
/// left to reap_keeper, so that cordon can tidy up while the kernel tears the namespaces down.
Outcome supervise(Started& started, ParentEnds& ends, const std::optional<std::string>& input,
                  const std::shared_ptr<StopToken>& stop,
                  std::optional<std::chrono::steady_clock::time_point> deadline, OutputSink& sink);

/// Reaps the (killed) keeper; only then is every process of the sandbox gone. Adds its usage,
/// and that of every orphan it reaped, to `out`.
void reap_keeper(Started& started, Outcome& out) noexcept;

}  // namespace cordon::landlock
