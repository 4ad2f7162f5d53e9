// Namespaces: the clone that creates them and the
// host settings that explain why a user namespace cannot be made.
#pragma once

#include <sched.h>
#include <sys/types.h>

#include <cstdint>
#include <string>

namespace cordon::landlock {

/// Always: user, mount, pid, IPC and UTS. The network namespace is added when the network is
/// denied; the cgroup namespace is made by the command's process once it is in its group.
inline constexpr std::uint64_t kSandboxNamespaces =
    CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS;

/// clone3's CLONE_CLEAR_SIGHAND (Linux 5.5): the child starts with every handled signal back at
/// its default action, so none of cordon's handlers can run in it, not even before its first
/// instruction. Ignored signals stay ignored.
inline constexpr std::uint64_t kCloneClearSighand = 0x100000000ull;

/// fork-like clone3 with CLONE_PIDFD (and CLONE_INTO_CGROUP when `cgroup_fd` >= 0). Returns
/// the child's pid in the parent (with `*pidfd` set), 0 in the child, -errno on failure. The
/// child must keep to async-signal-safe calls and leave with _exit.
pid_t clone_sandbox(std::uint64_t flags, int cgroup_fd, int* pidfd) noexcept;

/// Why the host refuses user namespaces, from its sysctls ("unprivileged user namespaces
/// disabled by kernel.apparmor_restrict_unprivileged_userns"); empty when none explains it.
std::string userns_restriction();

/// True when network namespaces may be created; `evidence` says what was checked.
bool network_namespaces_allowed(std::string& evidence);

/// The running kernel's version as major * 1000 + minor (6.18 -> 6018), 0 if unknown.
int kernel_version();

}  // namespace cordon::landlock
