// Starting the command's process: cordon starts the entrant, which joins the keeper's
// namespaces and clones the command's process as cordon's child (spawn.hpp).
#pragma once

#include <sys/types.h>

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

/// Starts the entrant with `spec` (on cordon's memory, or forked into the v2 cgroup `cgroup_fd`
/// when >= 0; it joins v1 groups itself), whose every field but those this sets (handshake_fd,
/// command_pid, stack) must be filled in; reaps it, which lets the command's process go on, and
/// returns once that has executed the command or failed (its report is then on the pipe). The
/// keeper must have been awaited and asked for the tree; it is moved into the result once the
/// entrant has run, and left with the caller if this throws cordon::Error (CRD1003).
Started start_command(ChildSpec& spec, int cgroup_fd, Keeper& keeper);

/// Kills the sandbox and reaps its processes: for a failure in cordon after start_command
/// returned.
void abandon(Started& started) noexcept;

}  // namespace cordon::landlock
