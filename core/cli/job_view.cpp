// Printing jobs for `cordon job`.
#include "job_view.hpp"

#include <cordon/request.hpp>

#include <boost/json.hpp>

#include <cstdio>
#include <iostream>
#include <string_view>

#include "run_output.hpp"

namespace cordon::cli {

namespace json = boost::json;

namespace {

// As `cordon run --json` has them: null where they do not apply (a job still running, one
// killed by a signal has no exit code, one that exited no signal).
void add_exit_status(json::object& o, const JobInfo& info) {
  const RunResult* r = info.result ? &*info.result : nullptr;
  o["exit_code"] = r && r->exit_code >= 0 ? json::value(r->exit_code) : nullptr;
  o["signal"] = r && r->signal > 0 ? json::value(r->signal) : nullptr;
  o["timed_out"] = r && r->timed_out;
}

}  // namespace

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
  add_exit_status(o, info);
  if (info.result) {
    const auto& r = *info.result;
    json::array report;
    for (const auto& e : r.report)
      report.push_back({{"capability", e.capability}, {"mechanism", e.mechanism}});
    json::array notes;
    for (const auto& n : r.notes) notes.push_back(json::string(n));
    o["duration_ms"] = r.duration.count();
    o["report"] = std::move(report);
    o["notes"] = std::move(notes);
    o["log_dropped_bytes"] = info.log_dropped_bytes;
    o["error"] = error_json(r.error);
  }
  return o;
}

json::object output_json(const JobInfo& info, const JobOutput& out) {
  json::object o = job_json(info);
  if (is_utf8(out.text))
    o["output"] = out.text;
  else
    o["output_base64"] = encode_base64(out.text);
  o["next_offset"] = out.next_offset;
  o["dropped_bytes"] = out.dropped_bytes;
  o["more"] = out.more;
  return o;
}

namespace {

// A value of the argv (or a message quoting one) on one line of `job list`: control bytes and
// C1 controls escaped, and the backslash itself, so that the escapes are unambiguous.
std::string one_line(std::string_view text) {
  std::string out;
  char buf[8];
  for (std::size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    auto next = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0;
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n' || c == '\t' || c == '\r') {
      out += c == '\n' ? "\\n" : c == '\t' ? "\\t" : "\\r";
    } else if (c < 0x20 || c == 0x7f) {
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else if (c == 0xc2 && next >= 0x80 && next <= 0x9f) {  // U+0080..U+009F
      std::snprintf(buf, sizeof buf, "\\u%04x", next);
      out += buf;
      ++i;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string outcome(const JobInfo& info) {
  std::string s = to_string(info.status);
  if (!info.result) return s;
  const auto& r = *info.result;
  if (r.error) return s + " (" + r.error->code() + ": " + r.error->message() + ")";
  if (r.timed_out) return s + " (timed out)";
  if (r.signal) return s + " (signal " + std::to_string(r.signal) + ")";
  return s + " (exit " + std::to_string(r.exit_code) + ")";
}

std::string command_line(const JobInfo& info) {
  std::string s;
  for (const auto& a : info.argv) s += (s.empty() ? "" : " ") + one_line(a);
  if (s.size() <= 60) return s;
  std::size_t cut = 57;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // UTF-8
  return s.substr(0, cut) + "...";
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
  std::cout << info.id << "\t" << one_line(outcome(info)) << "\t" << info.backend << "\t"
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
