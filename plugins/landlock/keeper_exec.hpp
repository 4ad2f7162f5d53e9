// The keeper's own program. The keeper used to be a fork of cordon: every page cordon wrote
// while it lived was then copied, each copy interrupting the other CPUs to flush their TLBs,
// which cost a long-lived cordon (a server, the C++ API) about half of a run. So the keeper is a
// small static program (keeper_program.cpp: keeper_process.cpp, mounts.cpp and child_io.cpp,
// none of cordon's libraries), embedded in the backend and executed from a sealed memfd, by a
// child that runs on cordon's memory only until it has executed it.
#pragma once

#include <sched.h>
#include <sys/types.h>

#include <cstddef>
#include <string_view>

namespace cordon::landlock {

/// The keeper program's bytes (a static executable).
std::string_view keeper_program() noexcept;

/// What the keeper's program is started with; the descriptors are cordon's, close-on-exec
/// there, and passed on to the program alone.
struct KeeperLaunch {
  int socket = -1;  ///< the keeper's end of its socket
  int cordon = -1;  ///< a pidfd of cordon
  int arena = -1;   ///< the memfd of the tree's arena (SharedArena)
  std::size_t arena_size = 0;
  bool network = false;           ///< make a network namespace
  bool root = false;              ///< cordon is root: it writes the maps, groups are dropped
  const char* uid_map = nullptr;  ///< set when cordon is not root: the maps it may write
  const char* gid_map = nullptr;
  const cpu_set_t* cpus = nullptr;  ///< the CPUs it may use, restored once it runs
};

/// Clones a child into a new user and pid namespace, on cordon's memory and with this thread
/// held until it has executed the keeper's program (its capabilities in the new user namespace
/// kept through the execve as ambient ones). Returns the keeper's pid with `*pidfd` set, or
/// -errno. `*unusable` is set when the program cannot be executed here, where a fork of cordon
/// would still do (no memfd, ambient capabilities or the execve refused, by a security module
/// say); nothing is left started then.
pid_t exec_keeper(const KeeperLaunch& launch, int* pidfd, bool* unusable) noexcept;

/// The keeper program's argv, in order after its name: socket, cordon, arena, arena_size,
/// network (0/1), root (0/1), cpus (comma-separated, or "-"), uid_map, gid_map ("-": none).
inline constexpr int kKeeperArgc = 10;

/// The exit status of a keeper that failed before it could report (its program or its fork).
inline constexpr int kKeeperFailed = 125;

}  // namespace cordon::landlock
