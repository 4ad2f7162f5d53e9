// Printing jobs for `cordon job`.
#include "job_view.hpp"

#include <cordon/request.hpp>

#include <boost/json.hpp>

#include <iostream>

namespace cordon::cli {

namespace json = boost::json;

json::object job_json(const JobInfo& info) {
  json::array argv;
  for (const auto& a : info.argv) argv.push_back(json::string(a));
  json::object o{{"id", info.id},
                 {"status", to_string(info.status)},
                 {"pid", info.supervisor_pid},
                 {"backend", info.backend},
                 {"policy", info.policy_name},
                 {"log", info.log.string()},
                 {"argv", std::move(argv)},
                 {"workspace", info.workspace.string()},
                 {"created_ms", std::chrono::duration_cast<std::chrono::milliseconds>(
                                    info.created.time_since_epoch())
                                    .count()},
                 {"supervisor_alive", info.status == JobStatus::running}};
  if (info.status == JobStatus::lost) o["live_processes"] = info.live_processes;
  if (!info.cleanup.empty()) {
    json::array lines;
    for (const auto& l : info.cleanup) lines.push_back(json::string(l));
    o["cleanup"] = std::move(lines);
  }
  if (info.result) {
    const auto& r = *info.result;
    json::array report;
    for (const auto& e : r.report)
      report.push_back({{"capability", e.capability}, {"mechanism", e.mechanism}});
    o["exit_code"] = r.exit_code;
    o["signal"] = r.signal;
    o["timed_out"] = r.timed_out;
    o["duration_ms"] = r.duration.count();
    o["report"] = std::move(report);
    o["log_dropped_bytes"] = info.log_dropped_bytes;
    if (r.error)
      o["error"] = {
          {"code", r.error->code()}, {"message", r.error->message()}, {"hint", r.error->hint()}};
  }
  return o;
}

json::object output_json(const std::string& id, const std::string& text) {
  if (is_utf8(text)) return {{"id", id}, {"output", text}};
  return {{"id", id}, {"output_base64", encode_base64(text)}};
}

namespace {

std::string outcome(const JobInfo& info) {
  std::string s = to_string(info.status);
  if (!info.result) return s;
  const auto& r = *info.result;
  if (r.error) return s + " (" + r.error->code() + ": " + r.error->message() + ")";
  if (r.timed_out) return s + " (lifetime reached)";
  if (r.signal) return s + " (signal " + std::to_string(r.signal) + ")";
  return s + " (exit " + std::to_string(r.exit_code) + ")";
}

std::string command_line(const JobInfo& info) {
  std::string s;
  for (const auto& a : info.argv) s += (s.empty() ? "" : " ") + a;
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

}  // namespace

void print_job(const JobInfo& info, bool json, bool just_started) {
  if (json) {
    std::cout << json::serialize(job_json(info)) << "\n";
    return;
  }
  if (just_started) {
    std::cout << info.id << "\n";
    return;
  }
  std::cout << info.id << "\t" << outcome(info) << "\t" << info.backend << "\t"
            << command_line(info) << "\n";
  for (const auto& line : info.cleanup)
    std::cerr << "note: job " << info.id << ": " << line << "\n";
}

void print_jobs(const std::vector<JobInfo>& jobs, bool json) {
  if (json) {
    json::array a;
    for (const auto& j : jobs) a.push_back(job_json(j));
    std::cout << json::serialize(a) << "\n";
    return;
  }
  for (const auto& j : jobs) {
    print_job(j, false);
    if (j.status != JobStatus::lost) continue;
    std::cerr << "warning: job " << j.id << ": its supervisor is gone and left no result";
    if (j.live_processes > 0)
      std::cerr << "; " << j.live_processes << " of its processes are alive ('cordon job stop "
                << j.id << "' ends them)";
    std::cerr << "\n";
  }
}

int job_exit_status(const JobInfo& info) {
  if (info.status == JobStatus::running) return 124;
  if (info.status == JobStatus::lost || !info.result) return 125;
  return info.result->cli_status();
}

}  // namespace cordon::cli
