// Sandboxes created ahead of the runs that use them (`pool = N`): each is used by one run and
// killed after it. A background thread tops the pool up after each take; what is left when the
// backend goes away is killed. Sandboxes carry cordon's metadata, so those of a cordon that was
// killed are found again by `cordon gc`.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "api.hpp"
#include "settings.hpp"

namespace cordon::e2b {

/// The metadata every sandbox of this process carries: the machine, boot, process (and its
/// start time, so a reused pid is not taken for it) and user.
std::map<std::string, std::string> own_metadata();

/// True when the sandbox `metadata` describes was made by a cordon process of this machine that
/// is gone (so nothing will kill it but `cordon gc`). Reads /proc.
bool orphaned(const std::map<std::string, std::string>& metadata);

class Pool {
 public:
  Pool() = default;
  ~Pool();
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  /// A sandbox ready for a run of `settings` with network `internet`: a pooled one when there
  /// is one (`pooled` set true), else one created now. With settings.pool > 0 the pool is
  /// topped up in the background. Throws cordon::Error as Api::create.
  Sandbox take(const Settings& settings, const std::string& key, bool internet, bool& pooled);

  /// Kills every pooled sandbox now.
  void drain();

 private:
  struct Entry {
    Sandbox sandbox;
    std::chrono::steady_clock::time_point expires;
  };
  struct Shelf {
    Settings settings;
    std::string key;
    bool internet = false;
    std::deque<Entry> ready;
    int creating = 0;
  };
  static Sandbox create(const Settings& settings, const std::string& key, bool internet,
                        long lease);
  void refill_loop();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::map<std::string, Shelf> shelves_;
  std::thread refiller_;
  bool stopping_ = false;
};

}  // namespace cordon::e2b
