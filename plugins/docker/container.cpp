// Container lifecycle calls and the stale-container collector.
#include "container.hpp"

#include <boost/json/array.hpp>
#include <boost/json/parse.hpp>

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>

namespace cordon::docker {

namespace json = boost::json;

Container::Container(const Daemon& daemon, const std::string& name, const json::object& body)
    : daemon_(daemon) {
  Response r = daemon_.call("POST", "/containers/create?name=" + url_encode(name), body);
  std::string image = body.contains("Image") ? std::string(body.at("Image").as_string()) : "";
  if (r.status == 404)
    throw Error(code::kBackendResource,
                "image '" + image + "' is not on the docker daemon at " +
                    daemon_.endpoint().display() + ": " + daemon_message(r),
                "run 'docker pull " + image + "' (cordon never pulls)");
  if (r.status != 201)
    throw Error(code::kIsolationFailed,
                "the docker daemon refused to create the container: " + daemon_message(r));
  json::error_code ec;
  auto parsed = json::parse(r.body, ec);
  if (ec || !parsed.is_object() || !parsed.as_object().contains("Id"))
    throw Error(code::kBackendFault, "the docker daemon's create answer has no Id");
  id_ = std::string(parsed.as_object().at("Id").as_string());
  if (const auto* w = parsed.as_object().if_contains("Warnings"); w && w->is_array())
    for (const auto& item : w->as_array())
      if (item.is_string()) warnings_.emplace_back(item.as_string());
}

Container::~Container() {
  std::string why;
  remove(why);
}

void Container::start(const Cancel& cancel) const {
  Response r = daemon_.call("POST", "/containers/" + id_ + "/start", std::nullopt,
                            std::chrono::seconds(120), cancel);
  if (r.status != 204 && r.status != 304)
    throw Error(code::kIsolationFailed,
                "the docker daemon could not start the container: " + daemon_message(r));
}

bool Container::kill(const char* signal) const noexcept {
  try {
    Response r = daemon_.call("POST", "/containers/" + id_ + "/kill?signal=" + signal, std::nullopt,
                              std::chrono::seconds(10));
    return r.status == 204 || r.status == 409;
  } catch (...) {
    return false;
  }
}

json::object Container::inspect() const noexcept {
  try {
    return daemon_.json("GET", "/containers/" + id_ + "/json", code::kBackendFault, "inspect");
  } catch (...) {
    return {};
  }
}

bool Container::remove(std::string& why) noexcept {
  if (removed_ || id_.empty()) return true;
  try {
    Response r = daemon_.call("DELETE", "/containers/" + id_ + "?force=1&v=1", std::nullopt,
                              std::chrono::seconds(30));
    removed_ = r.status == 204 || r.status == 404;
    if (!removed_) why = daemon_message(r);
  } catch (const std::exception& e) {
    why = e.what();
  }
  return removed_;
}

ExitWaiter::ExitWaiter(const Daemon& daemon, const std::string& id, const Cancel& abandon) {
  thread_ = std::thread(&ExitWaiter::run, this, daemon.endpoint(),
                        daemon.path("/containers/" + id + "/wait?condition=next-exit"));
  std::unique_lock lock(mutex_);
  auto until = std::chrono::steady_clock::now() + kRequestTimeout;
  bool answered = false, abandoned = false;
  while (!answered && !abandoned && std::chrono::steady_clock::now() < until) {
    answered = cv_.wait_for(lock, std::chrono::milliseconds(50),
                            [this] { return registered_ || done_.load(); });
    abandoned = !answered && abandon && abandon();
  }
  if (!answered) {
    lock.unlock();
    cancel();
    thread_.join();
    if (abandoned) throw Cancelled();
    throw Error(code::kServiceUnreachable, "the docker daemon did not register the exit waiter");
  }
  if (!registered_) {
    std::string why = failure_;
    lock.unlock();
    thread_.join();
    throw Error(code::kServiceUnreachable, "cannot wait for the container: " + why);
  }
}

ExitWaiter::~ExitWaiter() {
  cancel();
  if (thread_.joinable()) thread_.join();
}

void ExitWaiter::run(Endpoint ep, std::string path) {
  std::string failure;
  std::optional<std::int64_t> status;
  try {
    auto on_head = [this](long code) {
      std::lock_guard lock(mutex_);
      registered_ = code == 200;
      if (!registered_) failure_ = "HTTP " + std::to_string(code);
      cv_.notify_all();
    };
    Response r = http_long_request(ep, "POST", path, on_head, [this] { return cancelled_.load(); });
    json::error_code ec;
    auto parsed = json::parse(r.body, ec);
    if (r.status == 200 && !ec && parsed.is_object())
      if (const auto* s = parsed.as_object().if_contains("StatusCode"); s && s->is_number())
        status = s->to_number<std::int64_t>();
    if (!status) failure = "unexpected wait answer: " + daemon_message(r);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  std::lock_guard lock(mutex_);
  status_ = status;
  if (failure_.empty()) failure_ = failure;
  done_ = true;
  cv_.notify_all();
}

bool ExitWaiter::wait_for(int ms) {
  std::unique_lock lock(mutex_);
  return cv_.wait_for(lock, std::chrono::milliseconds(ms), [this] { return done_.load(); });
}

std::optional<std::int64_t> ExitWaiter::status() const {
  std::lock_guard lock(mutex_);
  return status_;
}

std::string ExitWaiter::failure() const {
  std::lock_guard lock(mutex_);
  return failure_;
}

namespace {

// Fields 3 (the state) and 22 (when the process started, so that a reused pid is not taken for
// ours) of /proc/PID/stat; empty when there is no such process.
struct ProcStat {
  char state = 0;
  std::string start;
};

ProcStat proc_stat(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = text.rfind(')');
  if (close == std::string::npos || close + 2 >= text.size()) return {};
  std::istringstream fields(text.substr(close + 2));
  ProcStat out;
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i)
    if (i == 3) out.state = field.empty() ? 0 : field[0];
  out.start = field;
  return out;
}

std::string start_time(long pid) { return proc_stat(pid).start; }

std::string host_name() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

std::string label(const json::object& labels, const char* key) {
  const auto* v = labels.if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

}  // namespace

bool owner_gone(const json::object& labels) {
  if (label(labels, kHostLabel) != host_name()) return false;
  std::string pid_text = label(labels, kPidLabel);
  if (pid_text.empty() || pid_text.size() > 10) return false;
  long pid = std::strtol(pid_text.c_str(), nullptr, 10);
  if (pid <= 0) return false;
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return true;
  ProcStat st = proc_stat(pid);
  if (st.state == 'Z' || st.state == 'X') return true;
  return !st.start.empty() && st.start != label(labels, kStartLabel);
}

std::vector<std::string> owner_labels() {
  return {std::string(kPidLabel) + "=" + std::to_string(::getpid()),
          std::string(kStartLabel) + "=" + start_time(::getpid()),
          std::string(kHostLabel) + "=" + host_name()};
}

boost::json::object probe_body(const std::string& image, const char* purpose) {
  boost::json::object labels{{kRunLabel, purpose}};
  for (const auto& l : owner_labels()) labels[l.substr(0, l.find('='))] = l.substr(l.find('=') + 1);
  return {{"Image", image}, {"Cmd", boost::json::array{"/"}}, {"Labels", std::move(labels)}};
}

std::optional<std::string> deadline_label(
    const std::optional<std::chrono::steady_clock::time_point>& deadline) {
  if (!deadline) return std::nullopt;
  auto left = *deadline - std::chrono::steady_clock::now();
  auto at = std::chrono::system_clock::now() +
            std::chrono::duration_cast<std::chrono::system_clock::duration>(left);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(at.time_since_epoch()).count();
  return std::string(kDeadlineLabel) + "=" + std::to_string(ms);
}

bool spared(const json::object& listed, Sweep sweep, std::int64_t now_ms) {
  if (sweep == Sweep::all) return false;
  const auto* state = listed.if_contains("State");
  if (!state || !state->is_string() || state->as_string() != "running") return false;
  const auto* labels = listed.if_contains("Labels");
  if (!labels || !labels->is_object()) return false;
  std::string text = label(labels->as_object(), kDeadlineLabel);
  if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != std::string::npos)
    return false;
  return std::stoll(text) > now_ms;
}

std::vector<std::string> collect_stale(const Daemon& daemon, Sweep sweep) {
  auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  std::vector<std::string> removed;
  std::string filter = R"({"label":[")" + std::string(kRunLabel) + R"("]})";
  Response r = daemon.call("GET", "/containers/json?all=1&filters=" + url_encode(filter));
  json::error_code ec;
  auto parsed = json::parse(r.body, ec);
  if (r.status != 200 || ec || !parsed.is_array())
    throw Error(code::kServiceUnreachable, "cannot list containers: " + daemon_message(r));
  for (const auto& c : parsed.as_array()) {
    if (!c.is_object()) continue;
    const auto* labels = c.as_object().if_contains("Labels");
    const auto* id = c.as_object().if_contains("Id");
    if (!labels || !labels->is_object() || !id || !id->is_string()) continue;
    if (!owner_gone(labels->as_object()) || spared(c.as_object(), sweep, now_ms)) continue;
    std::string cid(id->as_string());
    Response d = daemon.call("DELETE", "/containers/" + cid + "?force=1&v=1");
    if (d.status == 204 || d.status == 404)
      removed.push_back("container " + cid.substr(0, 12) + " of run '" +
                        label(labels->as_object(), kRunLabel) + "' (cordon pid " +
                        label(labels->as_object(), kPidLabel) + " is gone)");
  }
  return removed;
}

}  // namespace cordon::docker
