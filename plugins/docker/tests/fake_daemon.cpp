// The fake daemon's answers.
#include "fake_daemon.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <stdexcept>

namespace cordon::docker::test {

namespace {

void send(int fd, const std::string& text) { (void)!::write(fd, text.data(), text.size()); }

std::string reply(const char* status, const std::string& body, const std::string& extra = "") {
  return std::string("HTTP/1.1 ") + status + "\r\nContent-Type: application/json\r\n" + extra +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

bool has(const std::string& line, const char* fragment) {
  return line.find(fragment) != std::string::npos;
}

}  // namespace

FakeDaemon::FakeDaemon(std::string path, Mode mode, Limits limits)
    : path_(std::move(path)), mode_(mode), limits_(limits) {
  ::unlink(path_.c_str());
  listener_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path_.c_str());
  if (::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listener_, 16) != 0)
    throw std::runtime_error("fake daemon: cannot listen");
  accept_thread_ = std::thread([this] { accept_loop(); });
}

FakeDaemon::~FakeDaemon() {
  die();
  accept_thread_.join();
  for (auto& t : workers_) t.join();
  for (int fd : held_) ::close(fd);
  ::unlink(path_.c_str());
}

std::vector<std::string> FakeDaemon::requests() {
  std::lock_guard lock(mutex_);
  return requests_;
}

bool FakeDaemon::saw(const std::string& method, const std::string& fragment) {
  for (const auto& line : requests())
    if (line.rfind(method + " ", 0) == 0 && line.find(fragment) != std::string::npos) return true;
  return false;
}

void FakeDaemon::die() {
  std::lock_guard lock(mutex_);
  if (dead_) return;
  dead_ = true;
  ::shutdown(listener_, SHUT_RDWR);
  ::close(listener_);
  for (int fd : held_) ::shutdown(fd, SHUT_RDWR);
}

void FakeDaemon::accept_loop() {
  for (;;) {
    int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return;
    std::lock_guard lock(mutex_);
    workers_.emplace_back([this, fd] { serve(fd); });
  }
}

// Answers `line`; says what becomes of the connection.
FakeDaemon::After FakeDaemon::answer(int fd, const std::string& line) {
  if (has(line, "/_ping")) {
    send(fd, reply("200 OK", "OK", "Api-Version: 1.41\r\n"));
  } else if (has(line, "/version")) {
    send(fd, reply("200 OK", R"({"ApiVersion":"1.41","MinAPIVersion":"1.12","Version":"fake",)"
                             R"("Arch":"amd64"})"));
  } else if (has(line, "/info")) {
    std::string limits = limits_ == Limits::all
                             ? R"("MemoryLimit":true,"SwapLimit":true,"PidsLimit":true,)"
                             : R"("MemoryLimit":false,"SwapLimit":false,"PidsLimit":false,)";
    send(fd,
         reply("200 OK", "{" + limits + R"("SecurityOptions":["name=seccomp,profile=default"]})"));
  } else if (has(line, "/containers/json")) {
    send(fd, reply("200 OK", "[]"));
  } else if (has(line, "/images/")) {
    send(fd, reply("200 OK", R"({"Id":"sha256:fake","Config":{"Env":[]}})"));
  } else if (has(line, "/containers/create")) {
    send(fd, reply("201 Created", R"({"Id":"fakeid","Warnings":[]})"));
  } else if (has(line, "/attach")) {
    if (mode_ != Mode::hold_attach)
      send(fd, "HTTP/1.1 101 UPGRADED\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n");
    return After::hold;
  } else if (has(line, "/wait")) {
    if (mode_ != Mode::hold_wait)
      send(fd,
           "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
           "Transfer-Encoding: chunked\r\n\r\n");
    return After::hold;
  } else if (has(line, "/start")) {
    if (mode_ == Mode::hold_start) return After::hold;
    send(fd, "HTTP/1.1 204 No Content\r\n\r\n");
    if (mode_ == Mode::vanish_after_start) {
      ::close(fd);
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      die();  // the daemon goes away while the command "runs"
      return After::closed;
    }
  } else if (line.rfind("DELETE ", 0) == 0 || has(line, "/kill")) {
    send(fd, "HTTP/1.1 204 No Content\r\n\r\n");
  } else {
    send(fd, reply("404 Not Found", R"({"message":"gone"})"));
  }
  return After::close;
}

void FakeDaemon::serve(int fd) {
  std::string req;
  char buf[4096];
  while (req.find("\r\n\r\n") == std::string::npos) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    req.append(buf, static_cast<std::size_t>(n));
  }
  std::string line = req.substr(0, req.find("\r\n"));
  {
    std::lock_guard lock(mutex_);
    requests_.push_back(line);
  }
  After after = answer(fd, line);
  if (after == After::close) ::close(fd);
  if (after != After::hold) return;
  std::lock_guard lock(mutex_);
  if (dead_) ::shutdown(fd, SHUT_RDWR);
  held_.push_back(fd);  // shut down by die(), closed by the destructor
}

}  // namespace cordon::docker::test
