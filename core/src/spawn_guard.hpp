// The supervisor's guard (internal): a seccomp filter that keeps the command and every
// descendant from disabling the process that will kill them. Without it, a command running as
// the same user could SIGKILL or SIGSTOP its supervisor (or re-limit it with prlimit) and leave
// setsid() children behind. Built and installed after fork: no allocation.
#pragma once

#include <linux/filter.h>
#include <sys/types.h>

#include <cstddef>

namespace cordon::detail {

/// A fixed-size BPF program.
struct GuardFilter {
  sock_filter code[64];
  unsigned short size = 0;
};

/// True when this architecture has a guard (x86-64, AArch64).
bool guard_supported();

/// Builds the filter: kill/tkill/tgkill/rt_sigqueueinfo/rt_tgsigqueueinfo/prlimit64/
/// pidfd_open aimed at `supervisor`, kill(-1), kill(-group), setpgid(..., group),
/// pidfd_send_signal, fcntl(F_SETOWN_EX) and fcntl(F_SETOWN) towards the supervisor fail with
/// EPERM; system calls of another ABI (32-bit, x32) fail with ENOSYS. Everything else passes.
bool build_guard(GuardFilter& filter, pid_t supervisor, pid_t group);

/// Installs `filter` on the calling thread (no_new_privs must be set). Returns 0 or an errno.
int install_guard(const GuardFilter& filter);

}  // namespace cordon::detail
