// Keepers started ahead for a process that runs sandboxes again and again (a server, the C++
// API): from the second run that wants a keeper of one kind (with or without a network
// namespace) on, one of that kind is kept ready, so that a run does not wait for its
// namespaces. It is prepared with the tree (and the identity's maps) the last run of its kind
// planned; a run takes it with that tree only when the tree it plans itself is the same to the
// last field (tree_key(): paths, host objects by device and inode, masks, owner), and a ready
// keeper with another tree is discarded. The filter, the ruleset, the limits and the command are
// made for each run, as for a keeper the run starts itself. A process that runs once (`cordon
// run`) warms nothing.
//
// The next keeper is started once the run that took one is over (done()), not beside its
// command: on two CPUs a keeper made while the command started slowed the command more than it
// saved (taking turns, a warm run measured about a fifth less wall time and a sixth less CPU
// time). A run that comes while one is being prepared for its tree waits for that one rather
// than start another.
//
// The keepers are started on a thread of the shelf's own, which lives as long as the backend:
// a keeper dies with the thread that started it (its parent-death signal), and the thread of a
// run (an API caller's, say) may end with the run. A fork of the process sees the shelf's copy but
// never takes from it: the keepers are its parent's children, and another process's run may
// already have joined one.
#pragma once

#include <sys/types.h>

#include <array>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "idmap.hpp"
#include "keeper.hpp"
#include "layout.hpp"

namespace cordon::landlock {

/// Ready keepers, one at most of each kind.
class KeeperShelf {
 public:
  KeeperShelf();
  /// Stops the thread and discards the keepers not taken.
  ~KeeperShelf();
  KeeperShelf(const KeeperShelf&) = delete;
  KeeperShelf& operator=(const KeeperShelf&) = delete;

  /// The tree a run wants: the next keeper of its kind is prepared with it.
  struct Order {
    Layout layout;
    Identity identity;
    std::string key;  ///< tree_key() of both
  };

  /// A ready keeper that makes a network namespace exactly when `network` asks for one, its
  /// tree (`Keeper::tree`) built and sealed when the last run of its kind wanted the same one as
  /// `*order`; an empty Keeper when none is ready (the caller starts its own). A ready keeper
  /// with another tree is discarded. Counts the request: from the second of a kind on, another
  /// is started ahead once a run of the kind is over (done()), for the last `order`'s tree (none:
  /// namespaces only). While one is being prepared for the same tree, waits for it (at most
  /// half a second).
  Keeper take(bool network, const Order* order);

  /// A run of this kind is over (whether it took a keeper or not): the next one of the kind may
  /// be started now.
  void done(bool network);

  /// True from the second request of a kind on: runs of that kind repeat.
  bool warm(bool network) const;

  /// True while the shelf's thread is preparing a keeper of a kind (for tests).
  bool preparing(bool network) const;

  /// The pid of the ready keeper of a kind, 0 when none is ready (for tests).
  pid_t ready_pid(bool network) const;

 private:
  struct Kind {
    Keeper keeper;
    std::optional<Order> order;  ///< the last run's tree
    std::uint64_t asked = 0;
    int failures = 0;
    bool may_fill = false;    ///< a run of this kind is over since the last take or fill
    bool filling = false;     ///< the thread is preparing one, for `filling_key`'s tree
    std::string filling_key;  ///< empty: namespaces only
  };
  void fill();

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::array<Kind, 2> kinds_;  ///< [0]: the host's network; [1]: a network namespace
  bool stopping_ = false;
  std::unique_ptr<std::thread> filler_;  ///< started with the second request of a kind
  const pid_t owner_;                    ///< the process the keepers belong to
};

}  // namespace cordon::landlock
