// Host-side targets and host facts for the escape suite.
#include "host.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <system_error>
#include <thread>

#include "process.hpp"

namespace escape {
namespace {

void check_call(bool ok, const std::string& what) {
  if (!ok) throw std::system_error(errno, std::generic_category(), what);
}

/// Binds a socket of `type` to `address` port 0; returns the fd and stores the chosen port.
int bind_loopback(const std::string& address, int type, int& port) {
  sockaddr_storage ss{};
  socklen_t len = 0;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&ss);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&ss);
  if (inet_pton(AF_INET, address.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    len = sizeof *v4;
  } else {
    check_call(inet_pton(AF_INET6, address.c_str(), &v6->sin6_addr) == 1, "address " + address);
    v6->sin6_family = AF_INET6;
    len = sizeof *v6;
  }
  int fd = socket(ss.ss_family, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  check_call(fd >= 0, "socket");
  check_call(bind(fd, reinterpret_cast<sockaddr*>(&ss), len) == 0, "bind " + address);
  check_call(getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0, "getsockname");
  port = ntohs(ss.ss_family == AF_INET ? v4->sin_port : v6->sin6_port);
  return fd;
}

bool wait_readable(int fd, int ms) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, ms) == 1;
}

/// Accepts one connection within `ms` and returns what it sent first.
std::optional<std::string> accept_and_read(int listen_fd, int ms) {
  if (!wait_readable(listen_fd, ms)) return std::nullopt;
  int c = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
  if (c < 0) return std::nullopt;
  std::string got;
  char buf[512];
  if (wait_readable(c, 2000)) {
    ssize_t n = read(c, buf, sizeof buf);
    if (n > 0) got.assign(buf, static_cast<std::size_t>(n));
  }
  close(c);
  return got;
}

}  // namespace

TcpListener::TcpListener(const std::string& address) {
  fd_ = bind_loopback(address, SOCK_STREAM, port_);
  check_call(listen(fd_, 16) == 0, "listen");
}

TcpListener::~TcpListener() { close(fd_); }

std::optional<std::string> TcpListener::accept_message(int ms) { return accept_and_read(fd_, ms); }

UdpReceiver::UdpReceiver(const std::string& address) {
  fd_ = bind_loopback(address, SOCK_DGRAM, port_);
}

UdpReceiver::~UdpReceiver() { close(fd_); }

std::optional<std::string> UdpReceiver::receive(int ms) {
  if (!wait_readable(fd_, ms)) return std::nullopt;
  char buf[512];
  ssize_t n = recv(fd_, buf, sizeof buf, 0);
  if (n < 0) return std::nullopt;
  return std::string(buf, static_cast<std::size_t>(n));
}

UnixListener::UnixListener(Kind kind, const std::string& name, mode_t mode) {
  sockaddr_un un{};
  un.sun_family = AF_UNIX;
  check_call(name.size() + 2 <= sizeof un.sun_path, "unix socket name too long: " + name);
  std::size_t offset = kind == Kind::abstract ? 1 : 0;
  std::memcpy(un.sun_path + offset, name.data(), name.size());
  auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + offset + name.size());
  fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  check_call(fd_ >= 0, "socket");
  check_call(bind(fd_, reinterpret_cast<sockaddr*>(&un), len) == 0, "bind unix " + name);
  check_call(listen(fd_, 16) == 0, "listen");
  if (kind == Kind::path) {
    path_ = name;
    check_call(chmod(name.c_str(), mode) == 0, "chmod " + name);
  }
}

UnixListener::~UnixListener() {
  close(fd_);
  if (!path_.empty()) unlink(path_.c_str());
}

std::optional<std::string> UnixListener::accept_message(int ms) { return accept_and_read(fd_, ms); }

HostSleeper::HostSleeper(const std::string& marker) {
  pid_ = fork();
  check_call(pid_ >= 0, "fork");
  if (pid_ == 0) {
    const char* argv[] = {marker.c_str(), "600", nullptr};
    execv("/bin/sleep", const_cast<char**>(argv));
    _exit(127);
  }
  // Until exec, the child's command line is ours: wait for the marker to show.
  for (int i = 0; i < 200 && pids_with_marker(marker).empty(); ++i) usleep(10000);
}

HostSleeper::~HostSleeper() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

bool HostSleeper::alive() {
  if (pid_ <= 0) return false;
  if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
    pid_ = -1;
    return false;
  }
  return true;
}

struct HostPulse::State {
  std::atomic<bool> stop{false};
  long slowest_ms = 0;
  bool failed = false;
  std::thread thread;
};

namespace {

/// One fork+exec+wait of /bin/true; returns milliseconds or -1.
long pulse_once() {
  auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  char* argv[] = {const_cast<char*>("/bin/true"), nullptr};
  if (posix_spawn(&pid, "/bin/true", nullptr, nullptr, argv, nullptr) != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start)
      .count();
}

}  // namespace

HostPulse::HostPulse() : state_(new State) {
  state_->thread = std::thread([s = state_] {
    while (!s->stop) {
      long ms = pulse_once();
      if (ms < 0) s->failed = true;
      s->slowest_ms = std::max(s->slowest_ms, ms);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
}

HostPulse::~HostPulse() {
  stop();
  delete state_;
}

long HostPulse::stop() {
  state_->stop = true;
  if (state_->thread.joinable()) state_->thread.join();
  return state_->failed ? -1 : state_->slowest_ms;
}

bool userns_available() {
  pid_t pid = fork();
  if (pid == 0) _exit(unshare(CLONE_NEWUSER) == 0 ? 0 : 1);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

bool ipv6_loopback_available() {
  int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  a.sin6_addr = in6addr_loopback;
  bool ok = bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  close(fd);
  return ok;
}

}  // namespace escape
