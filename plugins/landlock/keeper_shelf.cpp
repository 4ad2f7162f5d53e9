// Keepers started ahead (keeper_shelf.hpp).
#include "keeper_shelf.hpp"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <exception>
#include <utility>

namespace cordon::landlock {

namespace {

// A kind whose keepers keep failing to start is left alone: its runs start their own, and
// report why.
constexpr int kMaxFailures = 3;

bool alive(const Keeper& k) noexcept {
  pollfd p{k.pidfd.get(), POLLIN, 0};
  return ::poll(&p, 1, 0) == 0;  // a pidfd is readable once its process has exited
}

// A run waits up to this long for the keeper being prepared for its tree.
constexpr int kInFlightWaitMs = 500;

// Keepers prepared ahead wait up to this long for each step of their tree.
constexpr int kTreeTimeoutMs = 10000;

// A started keeper that has made its namespaces and, given an order, built and sealed its tree;
// or an empty one.
Keeper start_ready(bool network, const std::optional<KeeperShelf::Order>& order) noexcept {
  try {
    Keeper k = start_keeper(network);
    if (!await_keeper(k)) {
      if (!order) return k;
      write_keeper_maps(k, order->identity);
      request_tree(k, order->layout, order->identity);
      if (!await_sealed(k, kTreeTimeoutMs)) {
        k.tree = order->key;
        return k;
      }
    }
    discard_keeper(k);
  } catch (const std::exception&) {
  }
  return Keeper{};
}

}  // namespace

KeeperShelf::KeeperShelf() : owner_(::getpid()) {}

KeeperShelf::~KeeperShelf() {
  if (::getpid() != owner_) {
    (void)filler_.release();  // a thread of the parent: not in this process
    return;                   // the keepers are the parent's: only their descriptors close
  }
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (filler_) filler_->join();
  for (auto& kind : kinds_) discard_keeper(kind.keeper);
}

Keeper KeeperShelf::take(bool network, const Order* order) {
  if (::getpid() != owner_) return Keeper{};
  Keeper k, stale;
  {
    std::unique_lock lock(mutex_);
    Kind& kind = kinds_[network ? 1 : 0];
    ++kind.asked;
    // One being prepared for this very tree comes sooner than one the run would start itself.
    const std::string wanted_key = order ? order->key : std::string();
    cv_.wait_for(lock, std::chrono::milliseconds(kInFlightWaitMs),
                 [&] { return !kind.filling || kind.filling_key != wanted_key; });
    if (!order)
      kind.order.reset();
    else if (!kind.order || kind.order->key != order->key)
      kind.order = *order;
    kind.may_fill = false;  // until a run of this kind is over
    k = std::exchange(kind.keeper, Keeper{});
    if (k && !k.tree.empty() && (!order || k.tree != order->key))
      stale = std::exchange(k, Keeper{});
    if (kind.asked >= 2 && !stopping_ && !filler_)
      filler_ = std::make_unique<std::thread>([this] { fill(); });
  }
  // Nothing here is what another waits for (the thread: a kind over; a run: a keeper prepared),
  // and waking the thread at a run's start cost the run ~0.04 ms.
  discard_keeper(stale);
  if (k && !alive(k)) discard_keeper(k);
  return k;
}

// A fork of the process never locks the shelf: another thread may have held the lock at the
// fork, and the child's copy of it would then never be released.
void KeeperShelf::done(bool network) {
  if (::getpid() != owner_) return;
  {
    std::lock_guard lock(mutex_);
    kinds_[network ? 1 : 0].may_fill = true;
  }
  cv_.notify_all();
}

bool KeeperShelf::warm(bool network) const {
  if (::getpid() != owner_) return false;
  std::lock_guard lock(mutex_);
  return kinds_[network ? 1 : 0].asked >= 2;
}

bool KeeperShelf::preparing(bool network) const {
  std::lock_guard lock(mutex_);
  return kinds_[network ? 1 : 0].filling;
}

pid_t KeeperShelf::ready_pid(bool network) const {
  std::lock_guard lock(mutex_);
  const Keeper& k = kinds_[network ? 1 : 0].keeper;
  return k ? k.pid : 0;
}

void KeeperShelf::fill() {
  // Signals go to cordon's other threads; this one only starts keepers.
  sigset_t all;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_BLOCK, &all, nullptr);
  auto wanted = [](const Kind& kind) {
    return kind.asked >= 2 && kind.may_fill && !kind.keeper && kind.failures < kMaxFailures;
  };
  std::unique_lock lock(mutex_);
  for (;;) {
    cv_.wait(lock, [&] { return stopping_ || wanted(kinds_[0]) || wanted(kinds_[1]); });
    if (stopping_) return;
    for (std::size_t i = 0; i < kinds_.size(); ++i) {
      if (!wanted(kinds_[i])) continue;
      std::optional<Order> order = kinds_[i].order;
      kinds_[i].may_fill = false;
      kinds_[i].filling = true;
      kinds_[i].filling_key = order ? order->key : std::string();
      lock.unlock();
      Keeper k = start_ready(i == 1, order);
      lock.lock();
      Kind& kind = kinds_[i];
      kind.filling = false;
      if (!k) {
        ++kind.failures;
      } else if (stopping_ || kind.keeper) {
        lock.unlock();
        discard_keeper(k);
        lock.lock();
      } else {
        kind.failures = 0;
        kind.keeper = std::move(k);
      }
      cv_.notify_all();  // a run may be waiting for this one
    }
  }
}

}  // namespace cordon::landlock
