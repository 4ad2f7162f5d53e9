// Starting the command's process: the entrant, cloned by cordon (into its memory, or with
// memory of its own), joins the keeper's namespaces and clones the command's process as
// cordon's child.
#pragma once

#include <sys/types.h>

#include <memory>

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

/// The start of the command's process, in two steps, so that the entrant can join the
/// namespaces and load the seccomp filter (~0.2 ms) while cordon finishes the set-up.
///
/// The constructor prepares the entrant (in the v2 cgroup `cgroup_fd` when >= 0; it joins v1
/// groups itself) and, where it shares cordon's memory and descriptor table (no v2 cgroup, and
/// not `counts_entrant`: see below), starts it at once: it joins the v1 groups and the keeper's
/// namespaces, then the mount namespace once the keeper has switched root, loads the filter if
/// `spec.filter_in_entrant`, and waits to be told to go on. `spec` must outlive the Launch; the
/// fields the command's process alone reads (the ruleset, limits, argv, ...) may be filled in
/// until start(). The entrant's part needs: the report pipe, the groups' descriptors, the
/// keeper's namespaces and socket, the filter.
///
/// `counts_entrant`: the sandbox's processes are limited by RLIMIT_NPROC in its user
/// namespace, where the entrant would count for a moment after the command has started; it is
/// then forked, with memory of its own, in start().
///
/// Throws cordon::Error (CRD1003).
class Launch {
 public:
  Launch(ChildSpec& spec, int cgroup_fd, bool counts_entrant);
  /// An entrant start() was not called for is told to give up, and reaped.
  ~Launch();
  Launch(const Launch&) = delete;
  Launch& operator=(const Launch&) = delete;

  /// Lets the entrant go on (or starts it now) and waits for it: the command's process is then
  /// running or has failed (its report is on the pipe). The keeper must have been awaited.
  /// Throws cordon::Error (CRD1003); the keeper is discarded if anything fails.
  Started start(Keeper keeper);

 private:
  struct Resources;
  ChildSpec& spec_;
  int cgroup_fd_;
  std::unique_ptr<Resources> r_;
  pid_t entrant_ = -1;
  bool early_ = false;
  int dumpable_ = -1;
};

/// Kills the sandbox and reaps its processes: for a failure in cordon after Launch::start
/// returned.
void abandon(Started& started) noexcept;

}  // namespace cordon::landlock
