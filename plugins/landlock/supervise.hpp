// Cordon's side of a run: starting the sandbox's init, streaming its output, the deadline,
// and collecting how it ended. When supervise() returns, no process of the sandbox is alive.
#pragma once

#include <cordon/stop_token.hpp>
#include <memory>

#include <cordon/backend.hpp>

#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "fd.hpp"
#include "spawn.hpp"

namespace cordon::landlock {

/// The init, once started.
struct Started {
  pid_t pid = -1;
  UniqueFd pidfd;
};

/// Clones the init with `flags` (into the v2 cgroup `cgroup_fd` when >= 0; v1 groups are joined
/// by the init itself); then, when the spec waits for it, runs `write_maps(pid)` and writes a go
/// byte. Throws cordon::Error (CRD1003); the init is killed and reaped if anything fails after
/// the clone.
Started start_sandbox(const ChildSpec& spec, std::uint64_t flags, int cgroup_fd, int go_write,
                      const std::function<void(pid_t)>& write_maps);

/// Kills the init (and with it the whole sandbox) and reaps it: for a failure in cordon after
/// start_sandbox returned.
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
  bool started = false;                ///< the init has the command and handles SIGTERM
  bool exited = false;                 ///< the init reported the command's status
  int wait_status = 0;                 ///< that status
  bool timed_out = false;              ///< the deadline passed and the init was killed
  bool stopped = false;                ///< a StopToken asked for the kill, and it was done
  std::optional<ChildReport> failure;  ///< setup_failed or exec_failed, if any
  int init_status = 0;                 ///< the init's own wait status
  rusage usage{};                      ///< of the init and everything it reaped
};

/// Pumps output to `sink` as it arrives, feeds `input`, kills the init at `deadline`, and
/// reaps the init once every stream is closed.
Outcome supervise(Started& started, ParentEnds& ends, const std::optional<std::string>& input,
                  const std::shared_ptr<StopToken>& stop,
                  std::optional<std::chrono::steady_clock::time_point> deadline, OutputSink& sink);

}  // namespace cordon::landlock
