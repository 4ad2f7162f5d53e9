// What the sandbox's child processes (the keeper, the entrant, the command's process) write
// with raw system calls: their reports to cordon, the user namespace's maps, the loopback of a
// fresh network namespace. Free of cordon's libraries: the keeper's own program (keeper_exec.hpp)
// is built from this too.
#pragma once

#include <limits.h>
#include <sys/types.h>

#include <cstdint>

namespace cordon::landlock {

/// A record on the report pipe.
struct ChildReport {
  /// started: the keeper has made its namespaces and can be joined; pivoted: the new root is
  /// the mount namespace's root (it can be joined); built: the sandbox's file tree is complete;
  /// sealed: the blocked paths are masked and the host's root is detached from it.
  enum class Kind : std::uint32_t {
    setup_failed = 1,
    exec_failed = 2,
    started = 4,
    built = 5,
    sealed = 6,
    pivoted = 7
  };
  Kind kind = Kind::setup_failed;
  std::int32_t err = 0;     ///< errno of the failure
  char mechanism[32] = {};  ///< setup_failed: "mount namespace", "landlock", ...
  char detail[224] = {};    ///< what was being done, on which path
  /// started: where the keeper mapped the arena it reads the tree from (its own address).
  std::uint64_t arena = 0;
};
static_assert(sizeof(ChildReport) <= PIPE_BUF, "reports must be written atomically");

/// A report of `kind`: the errno, the mechanism, and what was being done (on `path`, if any).
ChildReport make_report(ChildReport::Kind kind, int err, const char* mechanism, const char* what,
                        const char* path = "") noexcept;

/// Writes `report` whole to a pipe or socket (retrying on EINTR).
void send_report(int fd, const ChildReport& report) noexcept;

/// Writes "deny" to /proc/PID/setgroups when `deny_setgroups`, then gid_map and uid_map.
/// Parent side (root), or the child for itself with pid 0 ("self"). Async-signal-safe.
/// Returns 0 or -errno; `failed` names the file that failed.
int write_id_maps(pid_t pid, const char* uid_map, const char* gid_map, bool deny_setgroups,
                  const char** failed) noexcept;

/// Brings up "lo" in the caller's (fresh) network namespace. 0 or -errno.
int bring_up_loopback() noexcept;

}  // namespace cordon::landlock
