// Things on the host side of the sandbox wall that the escape tests aim at: listeners the command
// must not reach, a process it must not see or kill, and facts about what the host offers.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

namespace escape {

/// A TCP listener on a loopback address ("127.0.0.1" or "::1") at a free port.
class TcpListener {
 public:
  explicit TcpListener(const std::string& address);
  TcpListener(const TcpListener&) = delete;
  TcpListener& operator=(const TcpListener&) = delete;
  ~TcpListener();
  int port() const { return port_; }
  /// The first message of the first connection accepted within `ms`, or nullopt.
  std::optional<std::string> accept_message(int ms);

 private:
  int fd_ = -1;
  int port_ = 0;
};

/// A UDP socket on a loopback address at a free port.
class UdpReceiver {
 public:
  explicit UdpReceiver(const std::string& address);
  UdpReceiver(const UdpReceiver&) = delete;
  UdpReceiver& operator=(const UdpReceiver&) = delete;
  ~UdpReceiver();
  int port() const { return port_; }
  /// The first datagram received within `ms`, or nullopt.
  std::optional<std::string> receive(int ms);

 private:
  int fd_ = -1;
  int port_ = 0;
};

/// A listening unix stream socket: a path in the filesystem (with `mode`), or an abstract name.
class UnixListener {
 public:
  enum class Kind { path, abstract };
  UnixListener(Kind kind, const std::string& name, mode_t mode = 0777);
  UnixListener(const UnixListener&) = delete;
  UnixListener& operator=(const UnixListener&) = delete;
  ~UnixListener();
  /// The first message of the first connection accepted within `ms`, or nullopt.
  std::optional<std::string> accept_message(int ms);

 private:
  int fd_ = -1;
  std::string path_;
};

/// A host `sleep` whose argv[0] is a marker, killed when destroyed.
class HostSleeper {
 public:
  explicit HostSleeper(const std::string& marker);
  HostSleeper(const HostSleeper&) = delete;
  HostSleeper& operator=(const HostSleeper&) = delete;
  ~HostSleeper();
  pid_t pid() const { return pid_; }
  /// Whether it still runs (reaps it if it died).
  bool alive();

 private:
  pid_t pid_ = -1;
};

/// While alive, starts /bin/true on the host every 100 ms and records the slowest start: a
/// contained bomb must leave the host responsive.
class HostPulse {
 public:
  HostPulse();
  HostPulse(const HostPulse&) = delete;
  HostPulse& operator=(const HostPulse&) = delete;
  ~HostPulse();
  /// Stops the pulse; returns the slowest fork+exec+exit of /bin/true in milliseconds, or -1 if
  /// one failed.
  long stop();

 private:
  struct State;
  State* state_;
};

/// Whether a process of ours can create a user namespace (unshare(CLONE_NEWUSER) in a child).
bool userns_available();

/// Whether the host has an IPv6 loopback address to listen on.
bool ipv6_loopback_available();

}  // namespace escape
