// How `cordon job` prints jobs: one line of text, or JSON.
#pragma once

#include <cordon/jobs.hpp>

#include <boost/json/object.hpp>

#include <string>
#include <vector>

namespace cordon::cli {

/// A job as JSON: id, status, pid, backend, log path, argv, workspace, created, exit_code and
/// signal (null when they do not apply, as `cordon run --json` has them), timed_out, and once
/// it has ended duration_ms, report, notes, log_dropped_bytes and error (null when none).
boost::json::object job_json(const JobInfo& info);
/// The job as job_json() has it, with "output" (or "output_base64" when it is not UTF-8),
/// "next_offset", "dropped_bytes" and "more" (JobOutput).
boost::json::object output_json(const JobInfo& info, const JobOutput& out);
/// Prints one job: `just_started` prints only the id in text form (for scripts).
void print_job(const JobInfo& info, bool json, bool just_started = false);
/// Prints a table of jobs, or a JSON array.
void print_jobs(const std::vector<JobInfo>& jobs, bool json);
/// The exit status `job wait` gives: the job's own (as `cordon run` would), 124 when the
/// wait timed out with the job still running, 125 for a lost or failed job.
int job_exit_status(const JobInfo& info);

}  // namespace cordon::cli
