// The command's process of a supervised run (internal), and what the supervisor shares with
// it. Everything here runs after fork(): async-signal-safe system calls only.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "spawn_child.hpp"
#include "spawn_guard.hpp"

namespace cordon::detail {

/// What the command's process writes on the failure pipe when a step before its execve fails.
struct ExecFailure {
  std::int32_t stage;
  std::int32_t error;
  std::int32_t item;
};

/// Writes the record `data` whole to `fd`, again after EINTR; gives up on an error.
void put_record(int fd, const void* data, std::size_t size);

/// The command's process, forked by the supervisor (`supervisor`): stdio, the namespaces it
/// finishes (with CLONE_NEWPID an init that stays behind, writing the command's status to
/// `init_status_fd`), rlimits, identity, working directory, the guard and the filter, then the
/// command. A step that fails is written to `report_fd` as an ExecFailure, and it exits.
[[noreturn]] void become_command(const ChildPlan& plan, const ChildFds& fds, pid_t supervisor,
                                 const GuardFilter* guard, int report_fd, int init_status_fd);

}  // namespace cordon::detail
