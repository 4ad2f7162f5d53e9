// A job's files on disk: names, atomic writes, JSON (internal to the jobs module).
#pragma once

#include <cordon/jobs.hpp>

#include <boost/json.hpp>

#include <filesystem>
#include <optional>
#include <string>

namespace cordon::detail {

inline constexpr const char* kJobFile = "job.json";
inline constexpr const char* kPolicyFile = "policy.toml";
inline constexpr const char* kLogFile = "output.log";
inline constexpr const char* kResultFile = "result.json";
inline constexpr const char* kSupervisorFile = "supervisor.json";
inline constexpr const char* kStopFile = "stop.json";

/// A new random, unguessable job id: "j" + 24 hex digits from the kernel's random source.
std::string new_job_id();
/// True for a string shaped like a job id (so a user-given id never names another path).
bool valid_job_id(const std::string& id);

/// Writes `text` to `path` atomically (temporary file in the same directory, fsync, rename),
/// mode 0600. Throws Error CRD6004.
void write_file_atomic(const std::filesystem::path& path, const std::string& text);
/// The JSON object in `path`, or nullopt when the file does not exist. Throws Error CRD6004 when
/// it exists but is not a JSON object.
std::optional<boost::json::object> read_json(const std::filesystem::path& path);

/// RunResult <-> JSON, as result.json and `--json` print it.
boost::json::object result_to_json(const RunResult& r);
RunResult result_from_json(const boost::json::object& o);

/// Start time of process `pid` in clock ticks since boot (field 22 of /proc/PID/stat), or 0
/// when there is no such live process (zombies count as gone). With the pid it identifies a
/// process across pid reuse.
std::uint64_t process_start_ticks(int pid);

}  // namespace cordon::detail
