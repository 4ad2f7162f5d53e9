// The warm pool and its filler thread.
#include "pool.hpp"

#include <boost/json/array.hpp>
#include <boost/json/serialize.hpp>

#include "host_side.hpp"
#include "waiter_blob.hpp"

namespace cordon::docker {

namespace json = boost::json;

namespace {

constexpr int kMaxFailures = 3;  // a body the daemon keeps refusing is not retried forever

json::object without_run(const json::object& body) {
  json::object b = body;
  b.erase("Cmd");
  b.erase("AttachStdin");
  b.erase("OpenStdin");
  b.erase("StdinOnce");
  if (auto* labels = b.if_contains("Labels"); labels && labels->is_object())
    for (const char* run_only : {kRunLabel, kDeadlineLabel}) labels->as_object().erase(run_only);
  return b;
}

}  // namespace

json::object waiter_body(const json::object& body, const std::string& waiter_path,
                         const std::string& run_label) {
  json::object b = without_run(body);
  // A one-shot run's deadline stays: the sweep of a dead cordon's containers reads it.
  if (const auto* labels = body.if_contains("Labels"); labels && labels->is_object())
    if (const auto* deadline = labels->as_object().if_contains(kDeadlineLabel))
      b["Labels"].as_object()[kDeadlineLabel] = *deadline;
  b["Cmd"] = json::array{kWaiterTarget};
  b["AttachStdin"] = true;
  b["OpenStdin"] = true;
  b["StdinOnce"] = true;
  if (!b["Labels"].is_object()) b["Labels"] = json::object{};
  b["Labels"].as_object()[kRunLabel] = run_label;
  if (!b["HostConfig"].is_object()) b["HostConfig"] = json::object{};
  auto& hc = b["HostConfig"].as_object();
  hc["Init"] = false;  // the waiter is the container's init
  if (!hc["Mounts"].is_array()) hc["Mounts"] = json::array{};
  hc["Mounts"].as_array().push_back(json::object{
      {"Type", "bind"}, {"Source", waiter_path}, {"Target", kWaiterTarget}, {"ReadOnly", true}});
  return b;
}

std::string pool_key(const json::object& body) { return json::serialize(without_run(body)); }

WarmPool::WarmPool(std::shared_ptr<const Daemon> daemon, std::string waiter_path)
    : daemon_(std::move(daemon)), waiter_path_(std::move(waiter_path)) {
  filler_ = std::thread(&WarmPool::fill, this);
}

WarmPool::~WarmPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  filler_.join();
  // Containers not taken are removed by their destructors, with the trash.
}

std::unique_ptr<Container> WarmPool::take(const json::object& body, std::uint32_t size) {
  std::string key = pool_key(body);
  std::unique_ptr<Container> taken;
  {
    std::lock_guard lock(mutex_);
    auto& shelf = shelves_[key];
    if (shelf.body.empty())
      shelf.body = waiter_body(without_run(body), waiter_path_, "pool-" + new_run_id());
    // One run of a body says nothing of the next: warming N containers for it would compete
    // with its own start and, in a one-shot process, be removed unused before it exits. A
    // second run shows a caller that runs again.
    shelf.size = ++shelf.asked >= 2 ? size : 0;
    if (!shelf.ready.empty()) {
      taken = std::move(shelf.ready.front());
      shelf.ready.pop_front();
    }
  }
  cv_.notify_all();
  return taken;
}

void WarmPool::discard(std::unique_ptr<Container> used) {
  {
    std::lock_guard lock(mutex_);
    trash_.push_back(std::move(used));
  }
  cv_.notify_all();
}

std::size_t WarmPool::ready(const json::object& body) {
  std::lock_guard lock(mutex_);
  auto it = shelves_.find(pool_key(body));
  return it == shelves_.end() ? 0 : it->second.ready.size();
}

// One step of the filler: remove a used container, or start one for a shelf below its size.
// Called with the lock held; releases it around daemon calls. False when there is nothing to do.
bool WarmPool::work_once(std::unique_lock<std::mutex>& lock) {
  if (!trash_.empty()) {
    auto used = std::move(trash_.front());
    trash_.pop_front();
    lock.unlock();
    used.reset();
    lock.lock();
    return true;
  }
  for (auto& [key, shelf] : shelves_) {
    if (shelf.ready.size() >= shelf.size || shelf.failures >= kMaxFailures) continue;
    json::object body = shelf.body;
    std::string k = key;
    lock.unlock();
    std::unique_ptr<Container> made;
    try {
      made = std::make_unique<Container>(*daemon_, "cordon-pool-" + new_run_id(), body);
      made->start();
    } catch (const std::exception&) {
      made.reset();
    }
    lock.lock();
    auto it = shelves_.find(k);
    if (it == shelves_.end()) return true;
    if (made)
      it->second.ready.push_back(std::move(made));
    else
      ++it->second.failures;
    return true;
  }
  return false;
}

void WarmPool::fill() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (!work_once(lock)) cv_.wait(lock);
  }
  while (!trash_.empty()) {
    auto used = std::move(trash_.front());
    trash_.pop_front();
    lock.unlock();
    used.reset();
    lock.lock();
  }
  for (auto& [key, shelf] : shelves_) shelf.ready.clear();
}

}  // namespace cordon::docker
