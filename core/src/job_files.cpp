// A job's files: ids, JSON state files, JSON encoding of results, process identity.
#include "job_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "job_seal.hpp"

namespace cordon::detail {

namespace fs = std::filesystem;
namespace json = boost::json;

std::string new_job_id() {
  unsigned char bytes[12];
  std::ifstream rnd("/dev/urandom", std::ios::binary);
  if (!rnd.read(reinterpret_cast<char*>(bytes), sizeof bytes))
    throw Error(code::kJobStart, "cannot read /dev/urandom for a job id");
  static const char* hex = "0123456789abcdef";
  std::string id = "j";
  for (unsigned char b : bytes) id += hex[b >> 4], id += hex[b & 15];
  return id;
}

bool valid_job_id(const std::string& id) {
  if (id.size() != 25 || id[0] != 'j') return false;
  for (std::size_t i = 1; i < id.size(); ++i)
    if (!std::isxdigit(static_cast<unsigned char>(id[i])) || std::isupper(id[i])) return false;
  return true;
}

std::optional<json::object> read_json(const PrivateDir& dir, const char* name) {
  // Unsealed records (written before seals) are taken only where no run reaches.
  const auto jobs = default_job_state_dir();
  return read_sealed(dir, name, !jobs.empty() && dir.path().parent_path() == fs::absolute(jobs));
}

json::object result_to_json(const RunResult& r) {
  json::array report;
  for (const auto& e : r.report)
    report.push_back({{"capability", e.capability}, {"mechanism", e.mechanism}});
  json::array notes;
  for (const auto& n : r.notes) notes.push_back(json::string(n));
  json::object o{{"exit_code", r.exit_code},
                 {"signal", r.signal},
                 {"timed_out", r.timed_out},
                 {"stdout_truncated", r.stdout_truncated},
                 {"stderr_truncated", r.stderr_truncated},
                 {"stdout_bytes", r.stdout_bytes},
                 {"stderr_bytes", r.stderr_bytes},
                 {"duration_ms", r.duration.count()},
                 {"report", std::move(report)},
                 {"notes", std::move(notes)}};
  if (r.peak_memory_bytes) o["peak_memory_bytes"] = *r.peak_memory_bytes;
  if (r.cpu_seconds) o["cpu_seconds"] = *r.cpu_seconds;
  if (r.cpu_user_seconds) o["cpu_user_seconds"] = *r.cpu_user_seconds;
  if (r.cpu_system_seconds) o["cpu_system_seconds"] = *r.cpu_system_seconds;
  if (r.processes_started) o["processes_started"] = *r.processes_started;
  if (r.error)
    o["error"] = {
        {"code", r.error->code()}, {"message", r.error->message()}, {"hint", r.error->hint()}};
  return o;
}

namespace {
template <class T>
T number(const json::object& o, const char* key, T fallback) {
  auto* v = o.if_contains(key);
  if (!v) return fallback;
  if (v->is_int64()) return static_cast<T>(v->get_int64());
  if (v->is_uint64()) return static_cast<T>(v->get_uint64());
  if (v->is_double()) return static_cast<T>(v->get_double());
  return fallback;
}
bool flag(const json::object& o, const char* key) {
  auto* v = o.if_contains(key);
  return v && v->is_bool() && v->get_bool();
}
}  // namespace

std::string string_member(const json::object& o, const char* key) {
  auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

RunResult result_from_json(const json::object& o) {
  RunResult r;
  r.exit_code = number<int>(o, "exit_code", -1);
  r.signal = number<int>(o, "signal", 0);
  r.timed_out = flag(o, "timed_out");
  r.stdout_truncated = flag(o, "stdout_truncated");
  r.stderr_truncated = flag(o, "stderr_truncated");
  r.stdout_bytes = number<std::uint64_t>(o, "stdout_bytes", 0);
  r.stderr_bytes = number<std::uint64_t>(o, "stderr_bytes", 0);
  r.duration = std::chrono::milliseconds(number<std::int64_t>(o, "duration_ms", 0));
  if (o.contains("peak_memory_bytes"))
    r.peak_memory_bytes = number<std::uint64_t>(o, "peak_memory_bytes", 0);
  if (o.contains("cpu_seconds")) r.cpu_seconds = number<double>(o, "cpu_seconds", 0);
  if (o.contains("cpu_user_seconds")) r.cpu_user_seconds = number<double>(o, "cpu_user_seconds", 0);
  if (o.contains("cpu_system_seconds"))
    r.cpu_system_seconds = number<double>(o, "cpu_system_seconds", 0);
  if (o.contains("processes_started"))
    r.processes_started = number<std::uint64_t>(o, "processes_started", 0);
  if (auto* rep = o.if_contains("report"); rep && rep->is_array())
    for (const auto& e : rep->get_array())
      if (e.is_object())
        r.report.push_back({string_member(e.get_object(), "capability"),
                            string_member(e.get_object(), "mechanism")});
  if (auto* notes = o.if_contains("notes"); notes && notes->is_array())
    for (const auto& n : notes->get_array())
      if (n.is_string()) r.notes.emplace_back(n.get_string());
  if (auto* e = o.if_contains("error"); e && e->is_object())
    r.error =
        Error(string_member(e->get_object(), "code"), string_member(e->get_object(), "message"),
              string_member(e->get_object(), "hint"));
  return r;
}

std::uint64_t process_start_ticks(int pid) {
  if (pid <= 0) return 0;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return 0;
  // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
  auto close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(stat.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && rest >> field; ++i) {
    if (i == 3 && (field == "Z" || field == "X")) return 0;  // a zombie is not alive
    if (i == 22) return std::stoull(field);
  }
  return 0;
}

std::optional<SupervisorRef> supervisor_of(const PrivateDir& dir) {
  auto sup = read_json(dir, kSupervisorFile);
  if (!sup) return std::nullopt;
  auto number = [&](const char* key) -> std::int64_t {
    auto* v = sup->if_contains(key);
    return v && v->is_number() ? v->to_number<std::int64_t>() : 0;
  };
  return SupervisorRef{static_cast<int>(number("pid")),
                       static_cast<std::uint64_t>(number("start_ticks")),
                       static_cast<int>(number("session"))};
}

}  // namespace cordon::detail
