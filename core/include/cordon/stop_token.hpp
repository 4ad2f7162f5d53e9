// Stopping a run early from another thread or a signal handler: background jobs use it for
// `cordon job stop`, the CLI for Ctrl-C.
#pragma once

#include <cordon/sdk/export.hpp>

#include <atomic>

namespace cordon {

/// A request to stop a run, shared between the caller and the backend. Requests only escalate:
/// none -> terminate -> kill. A backend waits on wake_fd() together with its other descriptors,
/// so it acts on a request at once; one that cannot poll a descriptor looks at requested() at
/// least every 100 ms while a run is going. One run per token.
class CORDON_API StopToken {
 public:
  enum class Level : int {
    none = 0,       ///< keep running
    terminate = 1,  ///< send SIGTERM to every process of the command
    kill = 2,       ///< kill every process of the command now, as at the deadline
  };

  /// Makes the wake-up descriptor; without one (no descriptors left) wake_fd() is -1.
  StopToken() noexcept;
  ~StopToken();
  StopToken(const StopToken&) = delete;
  StopToken& operator=(const StopToken&) = delete;

  /// Raises the request to `level` (a lower level than the current one is ignored) and makes
  /// wake_fd() readable when it was raised. Async-signal-safe.
  void request(Level level) noexcept;

  /// The highest level requested so far.
  Level requested() const noexcept { return static_cast<Level>(level_.load()); }

  /// Readable (POLLIN) once a request has raised the level since the last drain_wake(); -1 when
  /// the token has none. Close-on-exec; never read it directly.
  int wake_fd() const noexcept { return wake_read_; }

  /// Empties wake_fd(), before the waiter looks at requested(): it is readable again only
  /// when the level rises further.
  void drain_wake() noexcept;

 private:
  std::atomic<int> level_{0};
  int wake_read_ = -1;
  int wake_write_ = -1;
  static_assert(std::atomic<int>::is_always_lock_free);
};

}  // namespace cordon
