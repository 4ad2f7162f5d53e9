// The pool and the metadata that ties a sandbox to the cordon process that made it.
#include "pool.hpp"

#include <unistd.h>

#include <fstream>
#include <sstream>

#include "http.hpp"

namespace cordon::e2b {

namespace {

std::string first_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// Field 22 of /proc/PID/stat: the process's start time since boot, in clock ticks.
std::string start_time(const std::string& pid) {
  std::string stat = first_line(("/proc/" + pid + "/stat").c_str());
  auto close = stat.rfind(')');
  if (close == std::string::npos) return "";
  std::istringstream rest(stat.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && rest >> field; ++i)
    if (i == 22) return field;
  return "";
}

std::string machine_id() {
  std::string id = first_line("/etc/machine-id");
  return id.empty() ? first_line("/proc/sys/kernel/random/boot_id") : id;
}

// A pooled sandbox is given up this long before the service would kill it.
constexpr auto kMargin = std::chrono::seconds(20);

}  // namespace

std::map<std::string, std::string> own_metadata() {
  std::string pid = std::to_string(::getpid());
  return {{"cordon.machine", machine_id()},
          {"cordon.boot", first_line("/proc/sys/kernel/random/boot_id")},
          {"cordon.pid", pid},
          {"cordon.start", start_time(pid)},
          {"cordon.uid", std::to_string(::geteuid())}};
}

bool orphaned(const std::map<std::string, std::string>& m) {
  auto get = [&](const char* k) {
    auto it = m.find(k);
    return it == m.end() ? std::string() : it->second;
  };
  if (get("cordon.machine") != machine_id()) return false;  // another machine's
  if (get("cordon.boot") != first_line("/proc/sys/kernel/random/boot_id")) return true;
  std::string pid = get("cordon.pid");
  if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) return false;
  std::string now = start_time(pid);
  return now.empty() || now != get("cordon.start");
}

Pool::~Pool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (refiller_.joinable()) refiller_.join();
  drain();
}

Sandbox Pool::create(const Settings& settings, const std::string& key, bool internet, long lease) {
  CreateSpec spec;
  spec.timeout_seconds = lease;
  spec.internet = internet;
  spec.metadata = own_metadata();
  return Api(settings, key).create(spec);
}

Sandbox Pool::take(const Settings& settings, const std::string& key, bool internet, bool& pooled) {
  pooled = false;
  if (settings.pool > 0) {
    std::unique_lock lock(mutex_);
    std::string id = settings.key() + (internet ? "\nnet" : "\nnonet");
    auto& shelf = shelves_[id];
    shelf.settings = settings;
    shelf.key = key;
    shelf.internet = internet;
    std::optional<Sandbox> found;
    while (!shelf.ready.empty() && !found) {
      Entry e = shelf.ready.front();
      shelf.ready.pop_front();
      if (e.expires > std::chrono::steady_clock::now())
        found = e.sandbox;
      else
        Api(settings, key).kill(e.sandbox.id);
    }
    if (!refiller_.joinable()) refiller_ = std::thread([this] { refill_loop(); });
    lock.unlock();
    wake_.notify_all();
    if (found) {
      pooled = true;
      return *found;
    }
  }
  return create(settings, key, internet, settings.lease);
}

void Pool::refill_loop() {
  mark_background_thread();
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    Shelf* low = nullptr;
    for (auto& [id, shelf] : shelves_)
      if (static_cast<long>(shelf.ready.size()) + shelf.creating < shelf.settings.pool)
        low = &shelf;
    if (!low) {
      wake_.wait(lock);
      continue;
    }
    ++low->creating;
    Settings settings = low->settings;
    std::string key = low->key;
    bool internet = low->internet;
    lock.unlock();
    std::optional<Sandbox> made;
    try {
      made = create(settings, key, internet, settings.lease);
    } catch (...) {
      // The next take creates its own and wakes this loop again.
    }
    lock.lock();
    --low->creating;
    if (made) {
      auto expires =
          std::chrono::steady_clock::now() + std::chrono::seconds(settings.lease) - kMargin;
      if (stopping_)
        Api(settings, key).kill(made->id);
      else
        low->ready.push_back({*made, expires});
    } else {
      wake_.wait_for(lock, std::chrono::seconds(5));  // do not hammer a failing service
    }
  }
}

void Pool::drain() {
  std::map<std::string, Shelf> shelves;
  {
    std::lock_guard lock(mutex_);
    for (auto& [id, shelf] : shelves_) {
      shelves[id] = shelf;
      shelf.ready.clear();
    }
  }
  for (auto& [id, shelf] : shelves)
    for (auto& e : shelf.ready) Api(shelf.settings, shelf.key).kill(e.sandbox.id);
}

}  // namespace cordon::e2b
