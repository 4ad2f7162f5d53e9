// The backend toolkit: cordon's seccomp deny-list (cordon/seccomp_denials.hpp) as a filter.
//
// A backend that runs its command as a child process can prove proc.no_subprocess, and deny
// what cordon always denies, without writing BPF: compile the program in the parent, install it
// in the child just before execve(). The filter is inherited across fork and exec and cannot be
// removed.
//
//   std::vector<sock_filter> code = cordon::sdk::compile_denials({.no_subprocess = true});
//   pid_t pid = fork();                              // compile before: it allocates
//   if (pid == 0) {
//     if (cordon::sdk::try_install_denials(code) != 0) _exit(126);  // async-signal-safe
//     execve(...);
//   }
//
// The program is compiled by libseccomp, inside libcordon-core: a plugin needs neither
// libseccomp nor its headers.
#pragma once

#include <linux/filter.h>
#include <cordon/sdk/error.hpp>
#include <cordon/sdk/export.hpp>

#include <vector>

namespace cordon::sdk {

/// Which parts of cordon's deny-list a filter holds. System calls it does not name are allowed.
struct DenialOptions {
  /// What every cordon sandbox denies: the calls of seccomp::kDeniedCalls (EPERM), clone3
  /// (ENOSYS), clone with a namespace flag, the terminal-injecting ioctls, the personality flags
  /// that weaken ASLR (EPERM), and sockets outside seccomp::kAllowedSocketFamilies (EAFNOSUPPORT).
  bool always_denied = true;
  /// proc.no_subprocess: fork, vfork and clone without CLONE_THREAD fail with EPERM, clone3 with
  /// ENOSYS (libc then creates threads with clone). Threads still work.
  bool no_subprocess = false;
  /// TCP only: AF_INET and AF_INET6 sockets of any type but SOCK_STREAM, or of a protocol above
  /// IPPROTO_TCP, fail with EPERM (a backend whose network mechanism governs TCP alone).
  bool inet_stream_only = false;
  bool operator==(const DenialOptions&) const = default;
};

/// The filter `options` asks for, compiled for the architecture this process runs as. Every
/// other system call ABI (i386 and x32 on x86_64) kills the process: the filter's numbers are
/// not theirs. Allocates: call it before fork. Throws Error (CRD1003) when libseccomp fails.
CORDON_API std::vector<sock_filter> compile_denials(const DenialOptions& options);

/// Installs `code` on the calling thread: sets no_new_privs, then loads the filter (threads
/// created before keep running without it). 0, or the errno of the step that failed (EINVAL
/// for an empty or oversized program). Async-signal-safe: two system calls, no allocation, so
/// it may run in the child of a multithreaded parent between fork and execve.
CORDON_API int try_install_denials(const std::vector<sock_filter>& code) noexcept;

/// try_install_denials(), throwing Error (CRD1003) when it fails. Throwing allocates: not for
/// the child of a multithreaded parent after fork (use try_install_denials() there).
CORDON_API void install_denials(const std::vector<sock_filter>& code);

}  // namespace cordon::sdk
