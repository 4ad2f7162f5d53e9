// The front end's keeper in cordon's own memory (KeeperStart::shared).
//
// A keeper is a process of its own: pid 1 of its pid namespace, the holder of the sandbox's other
// namespaces. Forked, it gets a copy of cordon's address space, which on the virtual machines
// cordon is developed on costs about a tenth of a run's CPU time: the page tables copied, every
// page either side then writes copied again (~10 us a fault there), and the copy torn down when
// the keeper dies, while cordon waits to reap it. Cloned with CLONE_VM it shares cordon's memory
// instead, as the entrant and the command's process (until its execve) already do.
//
// What sharing needs, each checked here, else the keeper is forked (the same keeper):
// - a thread pointer of its own (CLONE_SETTLS), a copy of the main thread's static TLS and
//   thread control block: errno lives there, and a keeper writing cordon's errno would change
//   what cordon's own checks read. Checked: the executable's PT_TLS segment ends at the thread
//   pointer and holds errno (a static executable), the control block names itself, glibc's rseq
//   area lies within reach (x86-64, glibc 2.35 or later); no sanitizer;
// - its own stack, with a guard page below it: an overflow faults instead of writing into
//   cordon's memory;
// - arguments that live as long as it does (one block, kept until cordon exits: this is only
//   ever done once per process, for the keeper the front end starts as it starts);
// - no allocation and no lock: the copied thread data names cordon's allocator caches. The
//   keeper's code already allocates nothing (child_util.hpp), as a child of a multi-threaded
//   process must not.
//
// Called only before any signal handler is installed (the front end's first constructor): the
// legacy clone has no CLONE_CLEAR_SIGHAND, so the keeper starts with cordon's dispositions.
//
// What the command could reach is unchanged: seccomp denies it ptrace, process_vm_*, kcmp and
// pidfd_getfd, and /proc/1/mem or /proc/1/maps take the right to trace the keeper, which it lacks
// three times over: the keeper makes itself non-dumpable (now the shared memory: cordon too)
// before any command runs, it keeps CAP_KILL, which the command has not, and Landlock refuses
// tracing a process outside the tracer's domain. The dumpable flag belongs to the memory, so
// nothing else of cordon may set it again while such a keeper lives: the probe's children then
// have memory of their own, and a run leaves the flag as it is (keeper_shares_memory()).
#pragma once

#include <sys/types.h>

#include "keeper_process.hpp"

namespace cordon::landlock {

/// Starts keeper_main(args) in a process that shares this process's memory (see above), in a new
/// user and pid namespace. Returns its pid (its pidfd in `*pidfd`), -errno when the clone was
/// refused, or 0 when this process cannot give a keeper its memory safely, or already did: fork
/// it then.
pid_t clone_shared_keeper(const KeeperArgs& args, int* pidfd) noexcept;

/// True once this process has started a keeper on its memory (for the rest of its life): its
/// memory must then stay non-dumpable, whatever a child on it changes.
bool keeper_shares_memory() noexcept;

/// Puts back `saved` (PR_GET_DUMPABLE's answer, or -1) after a child on this memory changed
/// the flag; leaves it as it is while a keeper shares this memory.
void restore_dumpable(int saved) noexcept;

}  // namespace cordon::landlock
