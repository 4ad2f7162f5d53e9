// Cordon's side of a started sandbox (launch.hpp starts it): streaming the command's output,
// feeding its input, the deadline and stop requests, and collecting how it ended. When
// supervise() and reap_keeper() have returned, no process of the sandbox is alive.
#pragma once

#include <cordon/sdk/backend.hpp>
#include <cordon/sdk/stop_token.hpp>

#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "fd.hpp"
#include "keeper.hpp"
#include "launch.hpp"
#include "spawn.hpp"

namespace cordon::landlock {

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
