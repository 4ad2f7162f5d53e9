// What a lost job left behind, and ending it (internal to the jobs module).
//
// A job whose supervisor died without a result is `lost`. What it ran may still be there:
//   - host processes: the supervisor runs in a session of its own (job_spawn.cpp; its leader
//     is the intermediate process, which exits at once), and every process it started stays
//     in that session unless it made one itself. A landlock sandbox's
//     keeper (the pid namespace's root) and the `none` backend's supervising process are such
//     members; both normally die with the supervisor (parent-death signals), and a session
//     member found later is a leftover. The kernel never gives a pid that still names a
//     session to a new process, so the session id cannot be mistaken while any member lives.
//   - what a backend keeps elsewhere (a docker container): Backend::collect_garbage() with the
//     job's settings removes what runs of dead cordons — here, the dead supervisor — left.
// `job stop` ends both; `job gc` and `job remove` end them too and drop a record only when
// nothing is left alive and the backend's collection reported no error.
#pragma once

#include <cordon/jobs.hpp>

#include <boost/json/object.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace cordon::detail {

/// Live processes (zombies excluded) of session `sid` that are no older than `ticks` (the
/// supervisor's start); empty when a process has pid `sid` now (the session's leader exited
/// as the supervisor started, so that is another process, and the session is gone).
std::vector<int> session_processes(int sid, std::uint64_t ticks);

/// A lost job as recorded.
struct LostJob {
  int session = 0;                     ///< the supervisor's session id
  std::uint64_t supervisor_ticks = 0;  ///< the supervisor's start
  std::string backend;
  boost::json::object settings;  ///< the backend's settings for the job
};

/// What ending a lost job did; `clean` when nothing of it is known to be alive.
struct Settlement {
  std::vector<std::string> lines;
  bool clean = true;
};

/// Ends what `job` left: SIGTERM to its session's processes, SIGKILL after `grace` to those
/// left, then the backend's collect_garbage() (plugins found as `options` say, pinned by the
/// options' configuration; never where the job's records say: a record a sandbox could have
/// written must not choose code to load). Never throws.
Settlement settle_lost_job(const LostJob& job, const JobManagerOptions& options, Duration grace);

}  // namespace cordon::detail
