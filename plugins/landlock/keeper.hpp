// The keeper: pid 1 of a sandbox's pid namespace and the holder of its other namespaces.
//
// Making the namespaces is most of a sandbox's kernel cost (the network namespace alone is
// ~0.6 ms), and none of it depends on the policy but whether the network is denied. So the
// keeper is started before the run is planned: by the front end as soon as it starts, from a
// shelf of keepers started ahead once runs repeat (keeper_shelf.hpp), else at the start of the
// run. It makes the namespaces on the second core while cordon plans. The command's process,
// started once the plan is ready, joins them (setns) through descriptors of the namespaces that
// the keeper opens and sends over its socket; the tree it is to build comes through shared
// memory. (Not through the keeper's pidfd or /proc: neither can be joined once the keeper is
// non-dumpable, which it must be before the command runs: the front end's keeper shares
// cordon's memory, and every keeper holds cordon's descriptors until then.) After that the keeper
// only reaps orphans, passes a SIGTERM on to every process of the sandbox, and dies when cordon
// kills it, which kills everything in the namespace.
#pragma once

#include <sys/types.h>
#include <cordon/landlock/front.hpp>  // prestart_keeper, discard_prestarted_keeper

#include <array>
#include <memory>
#include <optional>

#include "fd.hpp"
#include "flat_layout.hpp"
#include "idmap.hpp"
#include "keeper_process.hpp"
#include "spawn.hpp"

namespace cordon::landlock {

/// A started keeper.
struct Keeper {
  pid_t pid = -1;
  UniqueFd pidfd;
  UniqueFd socket;       ///< cordon's end: reports (namespaces made, tree built) and requests
  bool network = false;  ///< it made a network namespace (loopback only)
  bool awaited = false;  ///< its report was read and was good
  std::array<UniqueFd, kKeeperNamespaces> ns;     ///< once awaited: the namespaces, user first
  std::array<int, kKeeperNamespaces> ns_types{};  ///< CLONE_NEW* of each
  int ns_count = 0;
  std::unique_ptr<SharedArena> arena;  ///< shared with it: the tree it is to build
  /// Prepared ahead (keeper_shelf.hpp): the tree_key() of the tree it has built and sealed,
  /// its maps written; empty when it waits for a run's tree.
  std::string tree;

  explicit operator bool() const noexcept { return pid > 0; }
};

/// How a keeper is started. A fork copies cordon's page tables, and every page cordon then
/// writes while the keeper lives is copied too, each copy interrupting the other CPUs to flush
/// their TLBs: cheap for the front end's keeper, forked as cordon starts (when it is smallest),
/// and about half of a run for a long-lived process. The keeper's own program
/// (keeper_exec.hpp) costs a copy of it into a memfd once per process (about 1 ms), then an
/// execve per keeper, on cordon's memory only until then. Where the program cannot be executed
/// (exec_keeper()'s `unusable`), every keeper of the process is forked instead: the same keeper.
/// `shared`: the front end's keeper, started as cordon starts, shares cordon's memory instead of
/// copying it (keeper_shared.hpp); forked where that cannot be done safely.
enum class KeeperStart { exec, fork, shared };

/// Starts a keeper in a new user and pid namespace; it makes the rest itself. Throws
/// cordon::Error (CRD1003) when the clone is refused.
Keeper start_keeper(bool network, KeeperStart how = KeeperStart::exec);

/// Waits until the keeper has made its namespaces (and taken their descriptors). Returns its
/// setup_failed report if it could not (or a made-up one if it died), nothing when it is
/// ready to be joined.
std::optional<ChildReport> await_keeper(Keeper& keeper) noexcept;

/// As root, writes the maps of the keeper's user namespace: the sandbox's identity, known only
/// once the run is planned (an unprivileged keeper has mapped cordon's own uid itself). Throws
/// cordon::Error (CRD1003).
void write_keeper_maps(const Keeper& keeper, const Identity& identity);

/// Has the (awaited) keeper build `layout`, its files owned by `identity`; it answers on its
/// socket (built, or setup_failed), which the command's process reads. Throws cordon::Error
/// (CRD1003) if the layout cannot be handed over.
void request_tree(Keeper& keeper, const Layout& layout, const Identity& identity);

/// Reads the keeper's word on the tree it was asked for, up to "sealed" (for a keeper prepared
/// ahead, whose word no command's process reads). Its setup_failed report, or a made-up one if
/// it died or said nothing for `timeout_ms`; nothing once the tree is sealed.
std::optional<ChildReport> await_sealed(Keeper& keeper, int timeout_ms) noexcept;

/// Sends the keeper SIGKILL, which kills every process of its namespace, after moving it off
/// the CPU cordon runs on: its death, the namespaces' teardown, then runs beside cordon's
/// tidying up (reading and removing the cgroup) instead of after it.
void kill_keeper(const Keeper& keeper) noexcept;

/// Keeps the shared arena of a reaped keeper for the next keeper (one at most): unmapping it
/// would make the kernel interrupt the other CPUs to flush their TLBs.
void recycle_arena(Keeper& keeper) noexcept;

/// Kills the keeper (kill_keeper) and reaps it.
void discard_keeper(Keeper& keeper) noexcept;

/// The prestarted keeper, when there is one that makes a network namespace exactly when
/// `network` asks for one; a mismatched one is discarded.
Keeper take_prestarted_keeper(bool network) noexcept;

}  // namespace cordon::landlock
