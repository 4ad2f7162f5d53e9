// A job's files on disk: names, JSON (internal to the jobs module). Every file is read and
// written through the job's PrivateDir, never by a path resolved again.
#pragma once

#include <cordon/jobs.hpp>
#include <cordon/sdk/private_dir.hpp>

#include <boost/json.hpp>

#include <filesystem>
#include <optional>
#include <string>

namespace cordon::detail {

inline constexpr const char* kJobFile = "job.json";
inline constexpr const char* kPolicyFile = "policy.toml";
inline constexpr const char* kLogFile = "output.log";
inline constexpr const char* kLogRotateFile = "output.log.rotate";
inline constexpr const char* kResultFile = "result.json";
inline constexpr const char* kSupervisorFile = "supervisor.json";

/// A new random, unguessable job id: "j" + 24 hex digits from the kernel's random source.
std::string new_job_id();
/// True for a string shaped like a job id (so a user-given id never names another path).
bool valid_job_id(const std::string& id);

/// The job record `name` of the job directory `dir` (job.json, supervisor.json, result.json),
/// its seal checked (job_seal.hpp), or nullopt when the file does not exist. Throws Error
/// CRD6004 when it exists but is not a JSON object, CRD1006 when it is not cordon's own or its
/// seal does not hold (an unsealed record is taken in the default job directory only).
std::optional<boost::json::object> read_json(const PrivateDir& dir, const char* name);

/// RunResult <-> JSON, as result.json and `--json` print it.
boost::json::object result_to_json(const RunResult& r);
RunResult result_from_json(const boost::json::object& o);

/// Start time of process `pid` in clock ticks since boot (field 22 of /proc/PID/stat), or 0
/// when there is no such live process (zombies count as gone). With the pid it identifies a
/// process across pid reuse.
std::uint64_t process_start_ticks(int pid);

/// A job's supervisor as supervisor.json records it: signalled only while it is still the same
/// process (its start time in ticks must match).
struct SupervisorRef {
  int pid = 0;
  std::uint64_t ticks = 0;
  int session = 0;  ///< its session id (job_reap.hpp)
  bool alive() const { return pid > 0 && ticks != 0 && process_start_ticks(pid) == ticks; }
};

/// The supervisor supervisor.json of `dir` names, or nullopt when there is none yet.
std::optional<SupervisorRef> supervisor_of(const PrivateDir& dir);

/// The string member `key` of `o`, or "" when it is missing or not a string.
std::string string_member(const boost::json::object& o, const char* key);

/// True once a job is no longer running.
inline bool ended(JobStatus s) { return s != JobStatus::running; }

}  // namespace cordon::detail
