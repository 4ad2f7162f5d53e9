// One command in a made container: attach, the exit waiter and start (one-shot) or a started
// pooled container, the waiter's input (nonce, mount checks, argv), the stream, and the outcome.
#pragma once

#include <cordon/sdk/backend.hpp>

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "api.hpp"
#include "container.hpp"
#include "mount_identity.hpp"

namespace cordon::docker {

/// True once the run should not go on making its container: a stop request, or the deadline.
Cancel abandon_for(const Plan& plan);

/// The programs masked for process.blocked_commands (container paths) and the blocked names:
/// a command refused at one of them is named as masked (CRD4005), not as not executable.
struct Masked {
  std::vector<std::string> programs;
  std::vector<std::string> blocked;

  /// The masked path that `program` (the name the waiter could not execute) leads to, looked
  /// up as the waiter looks it up (a name through `path_env`, then the system directories);
  /// empty if it leads to none. Pure.
  std::string find(const std::string& program, const std::string& path_env) const;
};

/// Runs plan.argv in `container` (made from waiter_body()): attaches; for a one-shot container
/// registers the exit waiter and starts it; sends the waiter its nonce, `checks`, the uid it
/// must run with (`expect_uid`: a user the image names) and the argv;
/// streams to `sink` and fills `result`. A failed mount check is a refusal (check_failure()):
/// the command did not run. False, with nothing run and `result` untouched, when a pooled
/// container was no longer running or failed its mount check (the caller runs one-shot).
/// Throws Cancelled when a stop or the deadline came while the container was being started.
bool attach_and_run(const Daemon& daemon, const Container& container, bool pooled,
                    const std::vector<MountCheck>& checks, std::optional<uid_t> expect_uid,
                    const Masked& masked, const Plan& plan, OutputSink& sink, RunResult& result);

}  // namespace cordon::docker
