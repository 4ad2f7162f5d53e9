// Background commands of the agent server, as cordon's jobs.
#include "mcp_jobs.hpp"

#include <cmath>

#include "job_view.hpp"
#include "run_input.hpp"

namespace cordon::cli::mcp {

namespace json = boost::json;

namespace {

constexpr std::uint64_t kMaxChunk = 1u << 20;  // one get_command_output's most

json::object result(const std::string& text, json::object structured, bool error = false) {
  return {{"content", json::array{json::object{{"type", "text"}, {"text", text}}}},
          {"structuredContent", std::move(structured)},
          {"isError", error}};
}

std::string status_line(const JobInfo& info) {
  std::string s = "[" + info.id + ": " + to_string(info.status);
  if (info.result && info.status != JobStatus::running) {
    if (info.result->signal)
      s += ", signal " + std::to_string(info.result->signal);
    else if (info.result->exit_code >= 0)
      s += ", exit code " + std::to_string(info.result->exit_code);
  }
  return s + "]";
}

std::uint64_t number_of(const json::object& args, const char* key, std::uint64_t fallback) {
  const auto* v = args.if_contains(key);
  if (!v) return fallback;
  if (!v->is_number() || v->to_number<double>() < 0)
    throw Error(code::kBadArgument, std::string("'") + key + "' must be a number, 0 or more");
  return static_cast<std::uint64_t>(v->to_number<double>());
}

}  // namespace

std::string Background::own_id(const json::object& args) {
  const auto* v = args.if_contains("process_id");
  std::string id = v && v->is_string() ? std::string(v->as_string()) : "";
  std::lock_guard lock(mutex_);
  if (id.empty() || !started_.count(id))
    throw Error(code::kNoSuchJob, "no command '" + id + "' was started by this server",
                "list_commands names the ones it started");
  return id;
}

json::object Background::start(const Invocation& inv) {
  JobInfo info = jobs().start(job_spec(inv));
  {
    std::lock_guard lock(mutex_);
    started_.insert(info.id);
  }
  json::object s = job_json(info);
  s["process_id"] = info.id;
  return result("started in the background as " + info.id +
                    "; read its output with get_command_output (process_id \"" + info.id +
                    "\"), stop it with stop_command",
                std::move(s));
}

json::object Background::output(const json::object& args) {
  std::string id = own_id(args);
  JobManager jobs = this->jobs();
  JobOutput out;
  if (args.contains("since"))
    out = jobs.output_since(id, number_of(args, "since", 0), kMaxChunk);
  else
    out = jobs.output_tail(id, static_cast<std::size_t>(number_of(args, "tail", 200)));
  JobInfo info = jobs.status(id);
  json::object s = output_json(info, out);
  s["process_id"] = id;
  std::string text = out.text + (out.text.empty() || out.text.back() == '\n' ? "" : "\n") +
                     status_line(info) + " next since: " + std::to_string(out.next_offset);
  return result(text, std::move(s));
}

json::object Background::stop(const json::object& args) {
  std::string id = own_id(args);
  auto grace = std::chrono::milliseconds(static_cast<long long>(
      std::llround(1000.0 * static_cast<double>(number_of(args, "grace", 5)))));
  JobInfo info = jobs().stop(id, grace);
  json::object s = job_json(info);
  s["process_id"] = id;
  return result(status_line(info), std::move(s));
}

json::object Background::list() {
  std::set<std::string> mine;
  {
    std::lock_guard lock(mutex_);
    mine = started_;
  }
  json::array items;
  std::string text;
  for (const auto& info : jobs().list(true)) {
    if (!mine.count(info.id)) continue;
    json::object j = job_json(info);
    j["process_id"] = info.id;
    items.push_back(std::move(j));
    std::string argv;
    for (const auto& a : info.argv) argv += (argv.empty() ? "" : " ") + a;
    text += status_line(info) + " " + argv + "\n";
  }
  if (text.empty()) text = "no command was started in the background\n";
  return result(text, json::object{{"commands", std::move(items)}});
}

void Background::stop_all() {
  std::set<std::string> mine;
  {
    std::lock_guard lock(mutex_);
    mine = started_;
  }
  JobManager jobs = this->jobs();
  for (const auto& id : mine) try {
      if (jobs.status(id).status == JobStatus::running) jobs.stop(id, std::chrono::seconds(2));
    } catch (const Error&) {
      // gone already
    }
}

}  // namespace cordon::cli::mcp
