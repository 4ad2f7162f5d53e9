// Host-side process control for the escape suite: start a program with a chosen environment and
// inherited descriptors, capture its output, and learn how it ended and how much memory it used.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace escape {

/// What to start and how.
struct SpawnOptions {
  std::vector<std::string> argv;               ///< argv[0] is the program path
  std::map<std::string, std::string> set_env;  ///< added to (or replacing in) our environment
  std::vector<std::string> unset_env;          ///< removed from the inherited environment
  std::vector<int> inherit_fds;                ///< descriptors left open across exec
  std::chrono::milliseconds deadline{180000};  ///< the harness kills the process after this
  std::size_t capture_limit = 64u << 20;       ///< bytes kept per stream; the rest is counted
};

/// How a process ended.
struct Exit {
  int status = -1;              ///< exit code, or 128 + signal number, as a shell would report it
  int signal = 0;               ///< the signal that killed it, or 0
  bool harness_killed = false;  ///< the deadline passed and the harness killed it
  std::string out;              ///< captured stdout (up to capture_limit)
  std::string err;              ///< captured stderr (up to capture_limit)
  std::uint64_t out_bytes = 0;  ///< total bytes written to stdout
  long max_rss_kb = 0;          ///< peak resident set of the process itself (wait4 rusage)
  std::chrono::milliseconds wall{0};
};

/// A started process whose output is drained by wait(). Kills and reaps it on destruction.
class Process {
 public:
  explicit Process(const SpawnOptions& options);
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  ~Process();

  /// The host pid of the process.
  pid_t pid() const { return pid_; }

  /// Whether the process has not been reaped yet (it may be a zombie).
  bool running() const { return pid_ > 0; }

  /// Drains stdout and stderr until both close, reaps the process and reports how it ended.
  Exit wait();

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  SpawnOptions options_;
  std::chrono::steady_clock::time_point started_;
};

/// Starts a process and waits for it.
Exit run_process(const SpawnOptions& options);

/// Whether host pid `pid` exists (and is not a zombie).
bool pid_alive(pid_t pid);

/// Host pids whose /proc/<pid>/cmdline contains `marker`, zombies excluded.
std::vector<pid_t> pids_with_marker(const std::string& marker);

/// Host pids that carry `arg` as one whole argument of their command line and, when `name` is
/// not empty, are named `name` (/proc/<pid>/comm); zombies excluded. Unlike pids_with_marker,
/// a shell whose script merely mentions `arg`, or cordon's own command line, does not match.
std::vector<pid_t> pids_with_argument(const std::string& arg, const std::string& name = {});

/// A string unique to this test process and call, for argv markers and socket names.
std::string unique_marker(const std::string& prefix);

}  // namespace escape
