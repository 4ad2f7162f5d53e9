// The warm pool (backends.docker.pool = N): containers created and started ahead with a run's
// exact create body, their entry process the waiter (blocked on stdin for the argv). Each is
// taken by one run and removed after it, never reused; a background thread refills the pool
// and removes used containers.
#pragma once

#include <boost/json/object.hpp>

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "container.hpp"

namespace cordon::docker {

/// The create body of a container for a run's `body` (make_spec()): the waiter as the command
/// and pid 1 (from `waiter_path` on the host, bind-mounted read-only), stdin open, the run label
/// `run_label`, and the body's deadline label if any. Every container is made so, pooled
/// ("pool-…", made without a deadline) or one-shot (the run id). Pure.
boost::json::object waiter_body(const boost::json::object& body, const std::string& waiter_path,
                                const std::string& run_label);

/// What makes two runs' containers interchangeable: the body without its command, stdin flags
/// and run label. Pure.
std::string pool_key(const boost::json::object& body);

/// Ready containers per body, for one daemon.
class WarmPool {
 public:
  WarmPool(std::shared_ptr<const Daemon> daemon, std::string waiter_path);
  /// Stops the filler and removes every container not taken.
  ~WarmPool();
  WarmPool(const WarmPool&) = delete;
  WarmPool& operator=(const WarmPool&) = delete;

  /// A started container for `body` (a run's create body), or nullptr when none is ready yet.
  /// From the second run of a body on, `size` containers are kept ready for it: a body asked
  /// for once (a one-shot `cordon run`) warms nothing.
  std::unique_ptr<Container> take(const boost::json::object& body, std::uint32_t size);
  /// Hands a used container over for removal in the background.
  void discard(std::unique_ptr<Container> used);
  /// How many containers are ready for `body`.
  std::size_t ready(const boost::json::object& body);

 private:
  struct Shelf {
    boost::json::object body;  ///< the pooled body
    std::uint32_t size = 0;    ///< how many to keep ready
    std::uint64_t asked = 0;   ///< runs that wanted one
    std::deque<std::unique_ptr<Container>> ready;
    int failures = 0;
  };
  void fill();
  bool work_once(std::unique_lock<std::mutex>& lock);

  std::shared_ptr<const Daemon> daemon_;
  std::string waiter_path_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::map<std::string, Shelf> shelves_;
  std::deque<std::unique_ptr<Container>> trash_;
  bool stopping_ = false;
  std::thread filler_;
};

}  // namespace cordon::docker
