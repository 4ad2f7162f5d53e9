// A daemon that goes away mid-run: a fake daemon on a unix socket answers just enough to start
// a run, then drops every connection and stops listening. The run must end with CRD1005, not
// hang. Needs no real daemon.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "support.hpp"

using namespace cordon;
using namespace cordon::docker;
using namespace cordon::docker::test;

namespace {

// Answers one request per connection; attach and wait are held open until the start arrives,
// then everything is closed.
class FakeDaemon {
 public:
  explicit FakeDaemon(std::string path) : path_(std::move(path)) {
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
  ~FakeDaemon() {
    die();
    accept_thread_.join();
    for (auto& t : workers_) t.join();
    ::unlink(path_.c_str());
  }

 private:
  void die() {
    std::lock_guard lock(mutex_);
    if (dead_) return;
    dead_ = true;
    ::shutdown(listener_, SHUT_RDWR);
    ::close(listener_);
    for (int fd : held_) ::shutdown(fd, SHUT_RDWR);
  }

  void accept_loop() {
    for (;;) {
      int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) return;
      std::lock_guard lock(mutex_);
      workers_.emplace_back([this, fd] { serve(fd); });
    }
  }

  static void send(int fd, const std::string& text) {
    (void)!::write(fd, text.data(), text.size());
  }

  static std::string reply(const char* status, const std::string& body,
                           const std::string& extra = "") {
    return std::string("HTTP/1.1 ") + status + "\r\nContent-Type: application/json\r\n" + extra +
           "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  }

  void serve(int fd) {
    std::string req;
    char buf[4096];
    while (req.find("\r\n\r\n") == std::string::npos) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0) break;
      req.append(buf, static_cast<std::size_t>(n));
    }
    std::string line = req.substr(0, req.find("\r\n"));
    bool hold = false;
    if (line.find("/_ping") != std::string::npos) {
      send(fd, reply("200 OK", "OK", "Api-Version: 1.41\r\n"));
    } else if (line.find("/version") != std::string::npos) {
      send(fd, reply("200 OK", R"({"ApiVersion":"1.41","MinAPIVersion":"1.12","Version":"fake"})"));
    } else if (line.find("/info") != std::string::npos) {
      send(fd, reply("200 OK", R"({"MemoryLimit":true,"SwapLimit":true,"PidsLimit":true})"));
    } else if (line.find("/containers/json") != std::string::npos) {
      send(fd, reply("200 OK", "[]"));
    } else if (line.find("/images/") != std::string::npos) {
      send(fd, reply("200 OK", R"({"Id":"sha256:fake","Config":{"Env":[]}})"));
    } else if (line.find("/containers/create") != std::string::npos) {
      send(fd, reply("201 Created", R"({"Id":"fakeid","Warnings":[]})"));
    } else if (line.find("/attach") != std::string::npos) {
      send(fd, "HTTP/1.1 101 UPGRADED\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n");
      hold = true;
    } else if (line.find("/wait") != std::string::npos) {
      send(fd,
           "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
           "Transfer-Encoding: chunked\r\n\r\n");
      hold = true;
    } else if (line.find("/start") != std::string::npos) {
      send(fd, "HTTP/1.1 204 No Content\r\n\r\n");
      ::close(fd);
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      die();  // the daemon goes away while the command "runs"
      return;
    } else {
      send(fd, reply("404 Not Found", R"({"message":"gone"})"));
    }
    if (hold) {
      std::lock_guard lock(mutex_);
      if (dead_) ::shutdown(fd, SHUT_RDWR);
      held_.push_back(fd);
      return;  // closed by die()
    }
    ::close(fd);
  }

  std::string path_;
  int listener_ = -1;
  std::thread accept_thread_;
  std::mutex mutex_;
  std::vector<std::thread> workers_;
  std::vector<int> held_;
  bool dead_ = false;
};

}  // namespace

TEST_CASE("daemon: one that goes away mid-run ends the run with CRD1005, not a hang",
          "[unit][daemon]") {
  TempDir ws;
  std::string socket = ws / "fake.sock";
  FakeDaemon fake(socket);
  ::setenv("DOCKER_HOST", ("unix://" + socket).c_str(), 1);
  DockerBackend b(BackendContext{"docker", nullptr, "/var/tmp/cordon-docker-test"});
  bool available = b.probe().available;
  ::unsetenv("DOCKER_HOST");
  REQUIRE(available);
  auto plan = make_plan(base_policy(ws.path()), ws.path(), {"/bin/sleep", "60"});
  plan.settings["socket"] = socket;
  CaptureSink sink;
  auto start = std::chrono::steady_clock::now();
  auto r = b.run(plan, sink);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
  REQUIRE(r.error);
  CHECK(r.error->code() == "CRD1005");
  CHECK(r.error->message().find("went away mid-run") != std::string::npos);
}
