// The keeper's own process (see keeper.hpp): what it is given, what it sends back, and its
// code, which runs in the keeper's own program (keeper_exec.hpp).
#pragma once

#include <sched.h>

#include "child_io.hpp"
#include "flat_layout.hpp"

namespace cordon::landlock {

/// The namespaces the keeper sends, in the order they are joined: the user namespace first,
/// for the capabilities the others need. The network namespace is last and only there when
/// the keeper made one.
struct NamespaceFile {
  const char* path;
  int type;
};
inline constexpr NamespaceFile kNamespaceFiles[] = {
    {"/proc/self/ns/user", CLONE_NEWUSER}, {"/proc/self/ns/pid", CLONE_NEWPID},
    {"/proc/self/ns/mnt", CLONE_NEWNS},    {"/proc/self/ns/ipc", CLONE_NEWIPC},
    {"/proc/self/ns/uts", CLONE_NEWUTS},   {"/proc/self/ns/net", CLONE_NEWNET}};

/// The most namespaces a keeper holds: user, pid, mount, IPC, UTS, network.
inline constexpr int kKeeperNamespaces = 6;

/// The namespaces a keeper makes itself, besides its user and pid namespaces.
inline int keeper_namespaces(bool network) noexcept {
  return CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | (network ? CLONE_NEWNET : 0);
}

/// How many of kNamespaceFiles a keeper sends.
inline int namespace_count(bool network) noexcept { return network ? 6 : 5; }

/// The byte cordon sends to have the tree built from the FlatLayout at the start of the
/// shared arena.
inline constexpr char kBuildTree = 'b';

/// What the keeper's program was given (keeper_exec.hpp).
struct KeeperArgs {
  int socket = -1;  ///< the keeper's end of its socket
  int cordon = -1;  ///< a pidfd of cordon, readable once it has exited
  bool network = false;
  bool root = false;              ///< cordon is root: it writes the maps, groups are dropped
  const char* uid_map = nullptr;  ///< set when cordon is not root: the maps it may write
  const char* gid_map = nullptr;
  const FlatLayout* layout = nullptr;  ///< where cordon puts the tree to build (the arena)
  const cpu_set_t* cpus = nullptr;     ///< the CPUs it may use, restored once it runs
  const cpu_set_t* away = nullptr;     ///< a forked keeper: cordon's other CPUs, if any
  int cordon_cpu = -1;                 ///< the CPU cordon forked it on
};

/// The keeper: makes the namespaces and sends them (ChildReport started + descriptors); on
/// kBuildTree builds the tree and answers (built, or setup_failed); then keeps only CAP_KILL,
/// closes everything, reaps orphans and passes SIGTERM on, until it is killed.
[[noreturn]] void keeper_main(const KeeperArgs& args) noexcept;

}  // namespace cordon::landlock
