// Background jobs: commands that outlive the call that started them, under the same policy,
// with their state on disk so that any later cordon process can find them.
//
// Each job has a directory under the state directory holding job.json (what was asked),
// policy.toml (the effective policy it runs under), supervisor.json (who supervises it),
// output.log (stdout and stderr as they arrive, capped by limits.max_log_bytes keeping the
// newest), and result.json (written once, atomically, by the job's supervisor when the command
// has ended). The state directory, each job's directory and every file are cordon's own
// (cordon/private_dir.hpp): created 0700 or verified at every level, never through a symlink.
// The supervisor is a small `cordon job supervise` process of its own, detached from the
// caller's session; it takes its job from the starting cordon through an inherited sealed
// memory file, never from the job directory (job.json and policy.toml are for display only),
// and every sandbox is kept away from the state directory (Plan::protected_paths).
#pragma once

#include <cordon/sdk/error.hpp>
#include <cordon/sdk/export.hpp>
#include <cordon/sdk/policy.hpp>
#include <cordon/sdk/private_dir.hpp>
#include <cordon/sdk/result.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cordon {

/// Where a job stands.
enum class JobStatus {
  running,  ///< the supervisor is alive and no result is recorded yet
  exited,   ///< the command ended (any exit code or signal); see the result
  stopped,  ///< ended by `job stop`
  failed,   ///< cordon could not run it (refusal, isolation failure); see result.error
  lost,     ///< the supervisor is gone and left no result (killed, power loss)
};
CORDON_API const char* to_string(JobStatus s);

/// What a job is and how it ended (when it has).
struct JobInfo {
  std::string id;
  JobStatus status = JobStatus::running;
  std::vector<std::string> argv;
  std::filesystem::path workspace;
  std::string backend;  ///< the backend chosen at start
  std::string policy_name;
  int supervisor_pid = 0;
  std::chrono::system_clock::time_point created;
  std::filesystem::path dir;
  std::filesystem::path log;
  std::optional<RunResult> result;  ///< once ended (not for lost jobs)
  std::uint64_t log_dropped_bytes = 0;
  /// Lost jobs: host processes of the job still alive (its supervisor's session); `job stop`
  /// ends them.
  std::size_t live_processes = 0;
  /// What stop(), remove() or gc() ended of a lost job, one line each.
  std::vector<std::string> cleanup;
};

/// A piece of a job's output. Offsets count the bytes of everything the job wrote (stdout and
/// stderr in the order they arrived) from its start, so they stay valid when the log drops its
/// oldest output (limits.max_log_bytes).
struct JobOutput {
  /// The output, with a line "[cordon: ...]" wherever some of what was asked for is not shown
  /// (dropped from the log, or before the window of a tail).
  std::string text;
  /// Where the output returned ends: output_since() continues from it.
  std::uint64_t next_offset = 0;
  /// Bytes asked for that the log no longer holds (output_since() from an old offset).
  std::uint64_t dropped_bytes = 0;
  /// output_since() stopped at its `max_bytes`: more output is there already.
  bool more = false;
};

/// How much output_tail() reads at most, from the end of the log.
inline constexpr std::size_t kTailWindow = 64 * 1024;

/// The longest grace a stop gives (a longer one is shortened to it).
inline constexpr Duration kMaxStopGrace = std::chrono::hours(1);

/// What to start.
struct JobSpec {
  Policy policy;                       ///< resolved (presets, extends, paths)
  std::vector<std::string> argv;       ///< checked by the caller
  std::filesystem::path workspace;     ///< absolute
  std::optional<std::string> backend;  ///< named backend, or dispatch by policy
  std::optional<std::string> stdin_data;
  bool shell_unsafe = false;
  /// The job's lifetime: when it passes, the job is stopped (SIGTERM to the whole job, SIGKILL
  /// after the backend's grace), its result says `timed_out` and its notes say why. It may only
  /// shorten the policy's limits.job_lifetime (start() refuses a longer one, CRD4006). None: the
  /// policy's limits.job_lifetime, or until stopped.
  std::optional<Duration> timeout;
  /// More paths the job is kept from, besides cordon's own state and the policy's files (the
  /// request file it was started from).
  std::vector<std::filesystem::path> protected_paths;
};

/// How a JobManager finds its state, its supervisor program and its plugins.
struct JobManagerOptions {
  std::filesystem::path state_dir;   ///< default: default_job_state_dir()
  std::filesystem::path cordon_exe;  ///< default: the `cordon` next to the core library
  std::vector<std::filesystem::path> plugin_dirs;
  std::optional<std::filesystem::path> config;  ///< --config (read by start(), not the supervisor)
};

/// The default state directory: $XDG_STATE_HOME/cordon/jobs, else $HOME/.local/state/cordon/jobs;
/// without either, /var/lib/cordon/jobs for root and the password database's home for others
/// (empty when there is none). Reads the environment only.
CORDON_API std::filesystem::path default_job_state_dir();

/// Starts, inspects and stops background jobs. Every verb on an unknown id throws Error
/// CRD6001. Thread-compatible; any number of processes may use the same state directory.
class CORDON_API JobManager {
 public:
  explicit JobManager(JobManagerOptions options = {});
  ~JobManager();

  /// Chooses the backend (refusing at once, CRD1xxx, if none proves the policy), records the
  /// job and starts its supervisor. Returns as soon as the supervisor runs.
  JobInfo start(const JobSpec& spec);
  /// The job's state now.
  JobInfo status(const std::string& id) const;
  /// The last `lines` lines of the job's output, reading at most the last kTailWindow bytes of
  /// the log. When those bytes hold fewer lines than asked for, a marker line says so first; a
  /// line longer than the window is shown cut, behind a marker. `next_offset` is the end of the
  /// output now, for output_since().
  JobOutput output_tail(const std::string& id, std::size_t lines = 200) const;
  /// output_tail(id, lines).text.
  std::string output(const std::string& id, std::size_t lines = 200) const;
  /// The job's output from byte `offset` on (0: from the start; else a `next_offset` returned
  /// before), at most `max_bytes` of it (cut after a newline when there is one). Output the log
  /// dropped in the meantime is counted in `dropped_bytes` and marked in the text. An offset
  /// past the end of the output is refused (CRD4007).
  JobOutput output_since(const std::string& id, std::uint64_t offset,
                         std::size_t max_bytes = 1024 * 1024) const;
  /// Blocks until the job has ended or `timeout` passed; returns its state either way.
  JobInfo wait(const std::string& id, std::optional<Duration> timeout = std::nullopt) const;
  /// SIGTERM to the whole job, then SIGKILL after `grace` (at most kMaxStopGrace); returns the
  /// recorded result. A job that has already ended is left alone and its result returned; a
  /// lost one has whatever it left ended (its processes, its backend's garbage: see `cleanup`).
  JobInfo stop(const std::string& id, Duration grace = std::chrono::seconds(5));
  /// Every job (ended ones only with `all`), newest first. A job whose records cannot be
  /// trusted or read (a record another process rewrote, say) is left out, and named in
  /// `unreadable` when given ("job ID: why"); one still being made is left out silently.
  std::vector<JobInfo> list(bool all = false, std::vector<std::string>* unreadable = nullptr) const;
  /// Deletes the record of an ended job; refuses a running one (CRD6002). What a lost job left
  /// is ended first, and the record is kept (CRD6002) unless nothing of it is left alive.
  void remove(const std::string& id);
  /// Deletes the records of every ended job, as remove() does; returns how many. The lost jobs
  /// whose record was kept are described in `kept`, one line each.
  std::size_t gc(std::vector<std::string>* kept = nullptr);
  /// Stops every job this manager started and has not seen end (for hosts shutting down their
  /// API object): all are asked at once, so the graces run side by side.
  void stop_all(Duration grace = std::chrono::seconds(5));

  const std::filesystem::path& state_dir() const noexcept { return options_.state_dir; }

 private:
  struct PendingStop {
    std::string id;
    Duration grace;
    int supervisor_pid;
    std::uint64_t supervisor_ticks;
    bool lost;
  };
  std::optional<PendingStop> request_stop(const std::string& id, Duration grace);
  JobInfo finish_stop(const PendingStop& p);
  std::optional<PrivateDir> root() const;
  PrivateDir dir_of(const std::string& id) const;
  bool settle(const std::string& id, Duration grace, std::vector<std::string>& lines) const;
  JobManagerOptions options_;
  std::vector<std::string> started_;
};

/// The supervisor's side (`cordon job supervise DIR`): runs the job handed over on descriptor 3
/// (a sealed memory file written by JobManager::start) to its end, logging to `dir`, and writes
/// result.json there. Returns the process exit status for the supervisor.
CORDON_API int supervise_job(const std::filesystem::path& dir);

}  // namespace cordon
