// One container's life on the daemon: create, the exit waiter registered before start, start,
// signals, inspect, and removal that always happens (a guard), plus the collection of
// containers a dead cordon left behind.
#pragma once

#include <boost/json/object.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "api.hpp"

namespace cordon::docker {

/// The label every cordon container carries; its value is the run id.
inline constexpr const char* kRunLabel = "cordon.run";
/// The pid and host of the cordon that created it, for garbage collection.
inline constexpr const char* kPidLabel = "cordon.pid";
inline constexpr const char* kStartLabel = "cordon.pid_start";
inline constexpr const char* kHostLabel = "cordon.host";
/// When a one-shot run's container ends at the latest (its waiter kills the command there):
/// milliseconds since the epoch. A pooled container has none.
inline constexpr const char* kDeadlineLabel = "cordon.deadline";

/// A created container, removed (forced) when the object goes away.
class Container {
 public:
  /// Creates it; throws CRD1002 when the image is missing, CRD1003 for any other refusal.
  Container(const Daemon& daemon, const std::string& name, const boost::json::object& body);
  ~Container();
  Container(const Container&) = delete;
  Container& operator=(const Container&) = delete;

  const std::string& id() const { return id_; }
  /// Starts it; throws CRD1003 with the daemon's message when it cannot, Cancelled when
  /// `cancel` says so before the daemon answered (the container may then be starting).
  void start(const Cancel& cancel = {}) const;
  /// Sends `signal` ("SIGKILL", "SIGTERM"); false when the daemon did not take it.
  bool kill(const char* signal) const noexcept;
  /// The inspect answer, or an empty object when it cannot be had.
  boost::json::object inspect() const noexcept;
  /// Removes it now (forced); false with `why` when the daemon did not.
  bool remove(std::string& why) noexcept;
  /// Warnings the daemon returned at create.
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  const Daemon& daemon_;
  std::string id_;
  bool removed_ = false;
  std::vector<std::string> warnings_;
};

/// POST /containers/{id}/wait?condition=next-exit on its own thread. The constructor returns
/// once the daemon has registered the waiter, so a start after it cannot miss the exit; it
/// throws Cancelled when `cancel` says so first.
class ExitWaiter {
 public:
  ExitWaiter(const Daemon& daemon, const std::string& id, const Cancel& cancel = {});
  ~ExitWaiter();
  ExitWaiter(const ExitWaiter&) = delete;
  ExitWaiter& operator=(const ExitWaiter&) = delete;

  /// True once the wait answered or failed.
  bool done() const { return done_.load(); }
  /// Waits up to `ms` for done().
  bool wait_for(int ms);
  /// The exit status, once done; nullopt when the wait failed (`failure` says why).
  std::optional<std::int64_t> status() const;
  std::string failure() const;
  /// Gives up: the transfer is aborted within about 50 ms.
  void cancel() { cancelled_ = true; }

 private:
  void run(Endpoint ep, std::string path);

  std::thread thread_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool registered_ = false;
  std::atomic<bool> done_{false}, cancelled_{false};
  std::optional<std::int64_t> status_;
  std::string failure_;
};

/// Host name and pid identity written into the labels, and the test of a label set against
/// the living processes of this host. Pure apart from reading /proc.
std::vector<std::string> owner_labels();

/// The body of a container of `image` that is created and never started, only for the daemon
/// to look at its root (archive stat or read): `purpose` in the run label, owner labels so that
/// a sweep removes it once its creator is gone.
boost::json::object probe_body(const std::string& image, const char* purpose);

/// The creator of a container with these labels is gone: the same host, and its pid is dead, a
/// zombie (a killed cordon or job supervisor its parent has not reaped yet) or now another
/// process (another start time). Reads /proc.
bool owner_gone(const boost::json::object& labels);

/// The deadline label ("cordon.deadline=MS") of a run that ends at `deadline`, on the wall
/// clock now; nullopt without a deadline.
std::optional<std::string> deadline_label(
    const std::optional<std::chrono::steady_clock::time_point>& deadline);

/// Which containers of a gone creator are removed: every one (`cordon gc`, a lost job), or
/// those that are not running or have no deadline ahead (a process's first run against a
/// daemon: a killed cordon's command that its waiter still bounds may finish its work).
enum class Sweep { all, spare_bounded };

/// Whether a container of a gone creator, as GET /containers/json lists it, stays under
/// `sweep` at `now_ms` (milliseconds since the epoch). Pure.
bool spared(const boost::json::object& listed, Sweep sweep, std::int64_t now_ms);

/// Removes the cordon containers whose creating process on this host is gone, all or as
/// `sweep` says. Returns a line per container removed. Throws Error CRD1005 when the daemon
/// does not answer.
std::vector<std::string> collect_stale(const Daemon& daemon, Sweep sweep = Sweep::all);

}  // namespace cordon::docker
