// The agent server's transport (mcp_transport.hpp).
#include "mcp_transport.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>

namespace cordon::cli::mcp {

void Out::line(const std::string& text) {
  std::lock_guard lock(mutex_);
  if (gone_) return;
  // A client gone mid-answer must not kill the server with SIGPIPE (its background commands
  // would outlive it): blocked on this thread, a raised one is taken back before unblocking.
  sigset_t pipe_signal, old;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, &old);
  std::string l = text + "\n";
  for (std::size_t at = 0; at < l.size();) {
    ssize_t n = ::write(1, l.data() + at, l.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      gone_ = true;  // the client is gone; the reader sees stdin end
      break;
    }
    at += static_cast<std::size_t>(n);
  }
  timespec now{};
  while (sigtimedwait(&pipe_signal, nullptr, &now) == SIGPIPE) {
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

Inbox::Inbox(Out& out) : out_(out), reader_([this] { loop(); }) { reader_.detach(); }

std::optional<Message> Inbox::next() {
  std::unique_lock lock(mutex_);
  main_busy_ = false;
  ready_.wait(lock, [this] { return !queue_.empty() || closed_; });
  if (queue_.empty()) return std::nullopt;
  Message m = std::move(queue_.front());
  queue_.pop_front();
  main_busy_ = true;
  return m;
}

void Inbox::route_calls(std::function<void(Message)> calls) {
  std::lock_guard lock(mutex_);
  route_ = std::move(calls);
}

void Inbox::bind(const boost::json::value& id, std::shared_ptr<StopToken> stop) {
  std::lock_guard lock(mutex_);
  if (closed_) stop->request(StopToken::Level::kill);
  calls_[boost::json::serialize(id)] = {std::move(stop), false};
}

bool Inbox::unbind(const boost::json::value& id) {
  std::lock_guard lock(mutex_);
  auto it = calls_.find(boost::json::serialize(id));
  bool cancelled = it != calls_.end() && it->second.cancelled;
  if (it != calls_.end()) calls_.erase(it);
  return cancelled;
}

std::optional<boost::json::object> Inbox::ask(const boost::json::value& id,
                                              const std::string& request,
                                              std::chrono::seconds limit) {
  std::string key = boost::json::serialize(id);
  std::unique_lock lock(mutex_);
  answers_[key].reset();
  lock.unlock();
  out_.line(request);
  lock.lock();
  ready_.wait_for(lock, limit, [&] { return answers_[key].has_value() || closed_; });
  auto got = std::move(answers_[key]);
  answers_.erase(key);
  return got;
}

void Inbox::take(std::string_view line) {
  auto m = parse_message(line);
  if (!m) {
    out_.line(error_line(nullptr, kParseError, "not JSON"));
    return;
  }
  if (m->kind == Message::Kind::notification && m->method == "notifications/cancelled") {
    const auto* id = m->params.if_contains("requestId");
    std::lock_guard lock(mutex_);
    if (auto it = id ? calls_.find(boost::json::serialize(*id)) : calls_.end();
        it != calls_.end()) {
      it->second.cancelled = true;
      it->second.stop->request(StopToken::Level::kill);
    }
    return;
  }
  std::lock_guard lock(mutex_);
  if (route_ && queue_.empty() && !main_busy_ && m->kind == Message::Kind::request &&
      m->method == "tools/call") {
    route_(std::move(*m));
    return;
  }
  if (m->kind == Message::Kind::response) {
    if (auto it = answers_.find(boost::json::serialize(m->id)); it != answers_.end()) {
      it->second = std::move(m->params);
      ready_.notify_all();
    }
    return;  // a response to nothing of ours is dropped
  }
  queue_.push_back(std::move(*m));
  ready_.notify_all();
}

void Inbox::loop() {
  std::string line;
  bool skipping = false;  // inside a line too long to be a message
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(0, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    std::string_view chunk(buf, static_cast<std::size_t>(n));
    while (!chunk.empty()) {
      auto nl = chunk.find('\n');
      std::string_view part = chunk.substr(0, nl);
      if (!skipping) line.append(part);
      if (line.size() > kMaxMessageBytes) {
        if (!skipping)
          out_.line(error_line(nullptr, kParseError, "a message is larger than 16 MiB"));
        skipping = true;
        line.clear();
      }
      if (nl == std::string_view::npos) break;
      if (!skipping && !line.empty() && line != "\r") take(line);
      line.clear();
      skipping = false;
      chunk.remove_prefix(nl + 1);
    }
  }
  std::lock_guard lock(mutex_);
  closed_ = true;
  for (auto& [id, call] : calls_) call.stop->request(StopToken::Level::kill);
  ready_.notify_all();
}

Workers::Workers(std::function<void(const Message&)> work) : work_(std::move(work)) {
  for (std::ptrdiff_t i = 0; i < kParallel; ++i) threads_.emplace_back([this] { loop(); });
}

void Workers::submit(Message m) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(m));
  }
  ready_.notify_one();
}

void Workers::finish() {
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
  }
  ready_.notify_all();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

void Workers::loop() {
  for (;;) {
    std::unique_lock lock(mutex_);
    ready_.wait(lock, [this] { return !queue_.empty() || closing_; });
    if (queue_.empty()) return;
    Message m = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    work_(m);
  }
}

}  // namespace cordon::cli::mcp
