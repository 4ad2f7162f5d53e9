// One authenticated libssh connection to a target, and the pool that keeps them between runs.
//
// A connection is made with the target's settings only (no ~/.ssh/config is read), refuses a host
// key that is not in the known-hosts file or differs from it (CRD1008, with the fingerprint and
// the line to add), and asks for no agent, X11 or port forwarding and sends no environment.
// libssh sessions are not thread-safe: a connection is used by one run at a time, taken from the
// pool and given back.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "settings.hpp"

struct ssh_session_struct;
struct ssh_channel_struct;

namespace cordon::ssh {

/// What a short command run by Connection::capture left.
struct Captured {
  std::string out;
  std::string err;
  int status = -1;  ///< -1: no exit status (a signal, or the channel closed without one)
};

/// An open exec channel. Closed and freed on destruction.
class Channel {
 public:
  explicit Channel(ssh_channel_struct* channel) : channel_(channel) {}
  ~Channel();
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
  ssh_channel_struct* get() const { return channel_; }

 private:
  ssh_channel_struct* channel_;
};

class Connection {
 public:
  /// Connects, checks the host key, logs in. Throws cordon::Error: CRD1005 (unreachable, or the
  /// handshake failed), CRD1008 (host key), CRD1009 (login refused).
  explicit Connection(const Target& target);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  /// A new session channel running `line` (the login shell runs it with -c). Throws CRD1005.
  std::unique_ptr<Channel> exec(const std::string& line);
  /// Runs `line` to its end with no stdin (at most `seconds`) and returns what it printed.
  Captured capture(const std::string& line, int seconds = 10);
  /// False once the connection has dropped.
  bool alive() const;
  /// The socket, to wait on.
  int fd() const;
  ssh_session_struct* session() const { return session_; }
  const Target& target() const { return target_; }
  /// The host key's fingerprint ("SHA256:…").
  const std::string& fingerprint() const { return fingerprint_; }

  /// The long-lived channel to a remote `cordon serve --framed` on this connection
  /// (remote_server.hpp), once started.
  std::unique_ptr<Channel> server;

 private:
  void verify_host_key();
  void log_in();
  [[noreturn]] void fail(const char* code, const std::string& what) const;

  Target target_;
  ssh_session_struct* session_ = nullptr;
  std::string fingerprint_;
};

/// Idle connections by Target::key(), so that a second run to the same host costs a channel,
/// not a handshake. Thread-safe.
class Pool {
 public:
  /// An idle connection to `target` that is still up, or a new one (which may throw, as
  /// Connection's constructor).
  std::unique_ptr<Connection> take(const Target& target);
  /// Keeps `connection` for the next run, unless it has dropped.
  void give(std::unique_ptr<Connection> connection);

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<Connection>> idle_;
};

}  // namespace cordon::ssh
