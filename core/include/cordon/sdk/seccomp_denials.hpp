// cordon's seccomp denials, as data shared by every backend that builds a
// filter or a profile: the system calls denied outright and the argument conditions of the
// calls denied only in some forms. Pure: no libseccomp, no system headers; each backend turns
// it into its own form (a container runtime's JSON profile), or has cordon/sdk/seccomp.hpp
// compile it into a filter.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace cordon::seccomp {

/// System calls that fail with EPERM, whatever their arguments. A name the architecture (or
/// the libseccomp in use) does not know is skipped by the backend.
// clang-format off
inline constexpr std::array<std::string_view, 55> kDeniedCalls = {
    // other processes' memory
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
    // mounts, old and new API
    "mount", "umount", "umount2", "pivot_root", "fsopen", "fsconfig", "fsmount", "fspick",
    "move_mount", "open_tree", "open_tree_attr", "mount_setattr",
    // namespaces
    "unshare", "setns",
    // kernel attack surface: BPF, perf, userfaultfd, io_uring (which bypasses seccomp), keyrings
    "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter",
    "io_uring_register", "keyctl", "add_key", "request_key",
    // kernel code and the machine
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot",
    "swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "lookup_dcookie", "syslog", "uselib",
    "iopl", "ioperm", "vhangup", "nfsservctl", "fanotify_init",
    // file handles (container escapes through open_by_handle_at)
    "open_by_handle_at", "name_to_handle_at",
    // the host's clock and names
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname",
    "setdomainname"};
// clang-format on

/// clone3 fails with ENOSYS: its flags are in memory seccomp cannot read, and ENOSYS makes libc
/// fall back to clone, whose flags it can.
inline constexpr std::string_view kClone3 = "clone3";

/// clone fails with EPERM when its first argument has any of these bits: CLONE_NEWNS,
/// CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET.
inline constexpr std::uint64_t kCloneNamespaceFlags = 0x7e020000;

/// ioctl fails with EPERM for these requests (the second argument, low 32 bits: the kernel
/// reads the request as an unsigned int): TIOCSTI and TIOCLINUX, which inject input into a
/// terminal the command shares with its caller.
inline constexpr std::array<std::uint32_t, 2> kDeniedIoctls = {0x5412, 0x541c};

/// personality fails with EPERM when the first argument sets one of these flags
/// (ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC) and not kPersonalityQuery.
inline constexpr std::uint64_t kDeniedPersonalityFlags = 0x0040000 | 0x0400000;
/// Bit 31 is never a valid persona: with it set (0xffffffff) personality only reads.
inline constexpr std::uint64_t kPersonalityQuery = 0x80000000;

/// socket works only for these families (AF_UNIX, AF_INET, AF_INET6, AF_NETLINK); any other
/// fails with EAFNOSUPPORT (AF_VSOCK and AF_PACKET reach past a network namespace).
inline constexpr std::array<std::uint64_t, 4> kAllowedSocketFamilies = {1, 2, 10, 16};
/// The highest family number a backend lists one by one; above it, one comparison denies all.
inline constexpr std::uint64_t kHighestSocketFamily = 45;

}  // namespace cordon::seccomp
