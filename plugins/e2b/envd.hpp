// envd, the daemon inside a sandbox: processes started over Connect (process.Process/Start,
// a server stream of events), signals, and files over /files. Every request names the sandbox
// (E2b-Sandbox-Id), carries its access token and the Linux user (Basic auth, no password).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <cordon/sdk/error.hpp>

#include "api.hpp"
#include "connect.hpp"
#include "settings.hpp"

namespace cordon::e2b {

/// One process to start.
struct StartSpec {
  std::string user;
  std::string cmd;
  std::vector<std::string> args;
  std::map<std::string, std::string> envs;
  std::optional<std::string> cwd;
  /// envd keeps a pipe open on stdin unless told otherwise: a command that reads it would wait
  /// forever. cordon always says false: stdin travels as an argument of the run's script.
  bool stdin = false;
  /// Connect-Timeout-Ms: envd kills the process (that one pid) when it elapses.
  std::optional<std::chrono::milliseconds> lifetime;
};

/// How a started process's stream ended.
struct Outcome {
  long pid = 0;                ///< from the start event; 0: it never started
  std::optional<Event> end;    ///< the end event
  std::optional<Error> error;  ///< the call failed, or the stream broke before its end
};

/// A process's whole output and outcome (short helper commands).
struct Collected {
  Outcome outcome;
  std::string out, err;
};

class Envd {
 public:
  Envd(const Settings& settings, Sandbox sandbox);

  /// Starts `spec` and collects everything until it ends or `limit` passes (then the call is
  /// abandoned and the outcome's error says so; the process may still run).
  Collected run(const StartSpec& spec, std::chrono::milliseconds limit) const;
  /// Sends SIGTERM or SIGKILL ("SIGNAL_SIGTERM") to one pid. Throws cordon::Error (CRD1005).
  void signal(long pid, const std::string& name) const;
  /// POST /files: writes `bytes` to `path` as `user` (parents created). Throws cordon::Error.
  void upload(const std::string& path, const std::string& bytes, const std::string& user) const;
  /// GET /files: the file's bytes, or nullopt when it is not there. Throws cordon::Error.
  std::optional<std::string> download(const std::string& path, const std::string& user) const;

  const Sandbox& sandbox() const { return sandbox_; }

  /// The request of a Start call (for ProcessStream).
  struct Call;
  Call start_call(const StartSpec& spec) const;

 private:
  std::vector<std::string> headers(const std::string& user) const;

  Settings settings_;
  Sandbox sandbox_;
  std::string base_;
};

/// A started process whose output arrives on two local sockets, for the SDK's pump: a thread
/// reads the Connect stream, writes stdout and stderr to them as the events come, and closes
/// them when the stream ends (well, broken, or abandoned).
class ProcessStream {
 public:
  /// `ready`: the first bytes of stdout the script prints before it execs the command; what comes
  /// before it (on either stream) is kept back as the script's own output. Empty: none.
  ProcessStream(const Envd& envd, const StartSpec& spec, std::string ready = {});
  ~ProcessStream();
  ProcessStream(const ProcessStream&) = delete;
  ProcessStream& operator=(const ProcessStream&) = delete;

  int out_fd() const { return out_read_; }
  int err_fd() const { return err_read_; }
  /// The pid once the start event came (0 before); any thread.
  long pid() const;
  /// Stops reading the stream (the sandbox is being killed): the sockets close soon after.
  void abandon();
  /// True once the stream ended within `limit` (the reading thread is done or about to be).
  bool wait_ended(std::chrono::milliseconds limit) const;
  /// Waits for the reading thread and returns how the stream ended.
  Outcome finish();
  /// After finish(): whether the ready line came, and, when it did not, what the script wrote.
  bool ready() const;
  std::string setup_output() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
  int out_read_ = -1, err_read_ = -1;
};

}  // namespace cordon::e2b
