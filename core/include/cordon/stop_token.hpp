// Stopping a run early from another thread: background jobs use it for `cordon job stop`.
#pragma once

#include <cordon/export.hpp>

#include <atomic>

namespace cordon {

/// A request to stop a run, shared between the caller and the backend. Requests only escalate:
/// none -> terminate -> kill. Backends poll it at least every 100 ms while a run is going.
class StopToken {
 public:
  enum class Level : int {
    none = 0,       ///< keep running
    terminate = 1,  ///< send SIGTERM to every process of the command
    kill = 2,       ///< kill every process of the command now, as at the deadline
  };

  /// Raises the request to `level` (a lower level than the current one is ignored).
  /// Async-signal-safe.
  void request(Level level) noexcept {
    int want = static_cast<int>(level);
    int cur = level_.load();
    while (cur < want && !level_.compare_exchange_weak(cur, want)) {
    }
  }

  /// The highest level requested so far.
  Level requested() const noexcept { return static_cast<Level>(level_.load()); }

 private:
  std::atomic<int> level_{0};
  static_assert(std::atomic<int>::is_always_lock_free);
};

}  // namespace cordon
