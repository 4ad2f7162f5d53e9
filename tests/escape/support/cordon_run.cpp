// Invoking `cordon run` and decoding its report.
#include "cordon_run.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "backend_setup.hpp"
#include "probes.hpp"

namespace escape {
namespace json = boost::json;

namespace {

std::string str_member(const json::object& o, const char* key) {
  auto* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
}

std::int64_t int_member(const json::object& o, const char* key, std::int64_t fallback) {
  auto* v = o.if_contains(key);
  if (v == nullptr) return fallback;
  if (v->is_int64()) return v->as_int64();
  if (v->is_uint64()) return static_cast<std::int64_t>(v->as_uint64());
  return fallback;
}

bool bool_member(const json::object& o, const char* key) {
  auto* v = o.if_contains(key);
  return v != nullptr && v->is_bool() && v->as_bool();
}

/// Decodes standard base64, skipping anything outside the alphabet (padding, line breaks).
std::string base64_decode(const std::string& in) {
  static const std::string alphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  unsigned buffer = 0;
  int bits = 0;
  for (char c : in) {
    auto v = alphabet.find(c);
    if (v == std::string::npos) continue;
    buffer = (buffer << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buffer >> bits) & 0xff);
    }
  }
  return out;
}

/// A stream member, decoded when cordon marked it "<key>_base64" (output that is not UTF-8).
std::string stream_member(const json::object& o, const char* key) {
  std::string text = str_member(o, key);
  return bool_member(o, (std::string(key) + "_base64").c_str()) ? base64_decode(text) : text;
}

std::string shorten(const std::string& s, std::size_t max = 4000) {
  if (s.size() <= max) return s;
  return s.substr(0, max / 2) + "\n[... " + std::to_string(s.size() - max) + " bytes ...]\n" +
         s.substr(s.size() - max / 2);
}

}  // namespace

JsonResult parse_json_result(const std::string& text) {
  json::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec) throw std::runtime_error("cordon --json output is not JSON: " + ec.message());
  if (!v.is_object()) throw std::runtime_error("cordon --json output is not an object");
  const auto& o = v.as_object();
  JsonResult r;
  r.exit_code = static_cast<int>(int_member(o, "exit_code", -1));
  r.signal = static_cast<int>(int_member(o, "signal", 0));
  r.timed_out = bool_member(o, "timed_out");
  r.out = stream_member(o, "stdout");
  r.err = stream_member(o, "stderr");
  r.out_truncated = bool_member(o, "stdout_truncated");
  r.err_truncated = bool_member(o, "stderr_truncated");
  r.duration_ms = int_member(o, "duration_ms", -1);
  r.backend = str_member(o, "backend");
  if (auto* rep = o.if_contains("report"); rep != nullptr && rep->is_array()) {
    for (const auto& e : rep->as_array())
      if (e.is_object())
        r.report.emplace_back(str_member(e.as_object(), "capability"),
                              str_member(e.as_object(), "mechanism"));
  }
  if (auto* notes = o.if_contains("notes"); notes != nullptr && notes->is_array()) {
    for (const auto& n : notes->as_array())
      if (n.is_string()) r.notes.emplace_back(n.as_string());
  }
  if (auto* err = o.if_contains("error"); err != nullptr && err->is_object()) {
    const auto& e = err->as_object();
    r.error = ErrorInfo{str_member(e, "code"), str_member(e, "message"), str_member(e, "hint")};
  }
  return r;
}

std::string Ran::out() const { return json ? json->out : proc.out; }

std::vector<std::string> Ran::lines(const std::string& tag) const {
  std::vector<std::string> found;
  std::istringstream in(out());
  std::string line;
  std::string prefix = tag + ": ";
  while (std::getline(in, line))
    if (line.rfind(prefix, 0) == 0) found.push_back(line.substr(prefix.size()));
  return found;
}

std::string Ran::line(const std::string& tag) const {
  auto all = lines(tag);
  return all.empty() ? "<no line '" + tag + "'>" : all.front();
}

int Ran::status() const { return json && !json->error ? json->exit_code : proc.status; }

std::string Ran::error_code() const {
  if (json && json->error) return json->error->code;
  std::smatch m;
  static const std::regex code(R"(CRD[0-9]{4})");
  std::string text = proc.err + proc.out;
  return std::regex_search(text, m, code) ? m.str() : std::string();
}

std::string Ran::describe() const {
  std::ostringstream s;
  s << "cordon exit " << proc.status << (proc.harness_killed ? " (killed by the harness)" : "")
    << ", wall " << proc.wall.count() << " ms, peak RSS " << proc.max_rss_kb << " kB\n";
  if (json) {
    s << "json: exit_code=" << json->exit_code << " signal=" << json->signal
      << " timed_out=" << json->timed_out << " backend='" << json->backend
      << "' duration_ms=" << json->duration_ms << "\n";
    if (json->error)
      s << "json error: " << json->error->code << ": " << json->error->message
        << " (hint: " << json->error->hint << ")\n";
    for (const auto& [cap, mech] : json->report) s << "report: " << cap << " = " << mech << "\n";
    for (const auto& n : json->notes) s << "note: " << n << "\n";
    s << "--- command stdout:\n"
      << shorten(json->out) << "\n--- command stderr:\n"
      << shorten(json->err) << "\n";
  } else if (!json_problem.empty()) {
    s << "json problem: " << json_problem << "\n--- cordon stdout:\n" << shorten(proc.out) << "\n";
  } else {
    s << "--- cordon stdout:\n" << shorten(proc.out) << "\n";
  }
  s << "--- cordon stderr:\n" << shorten(proc.err);
  return s.str();
}

std::vector<std::string> cordon_argv(const Scratch& scratch, const std::string& policy_path,
                                     const std::vector<std::string>& command,
                                     const RunExtras& extras) {
  std::vector<std::string> argv{cordon_cli(), "run"};
  if (extras.with_policy) argv.insert(argv.end(), {"--policy", policy_path});
  std::string backend = extras.backend.value_or(backend_name());
  if (!backend.empty()) argv.insert(argv.end(), {"--backend", backend});
  if (extras.with_workspace) argv.insert(argv.end(), {"--workspace", scratch.ws()});
  if (extras.json) argv.push_back("--json");
  auto setup = backend_flags(scratch);
  argv.insert(argv.end(), setup.begin(), setup.end());
  argv.insert(argv.end(), extras.flags.begin(), extras.flags.end());
  argv.push_back("--");
  auto in_sandbox = sandbox_command(scratch, command);
  argv.insert(argv.end(), in_sandbox.begin(), in_sandbox.end());
  return argv;
}

Ran make_ran(Exit proc, bool json) {
  Ran ran{std::move(proc), std::nullopt, {}};
  if (!json) return ran;
  try {
    ran.json = parse_json_result(ran.proc.out);
  } catch (const std::exception& e) {
    ran.json_problem = e.what();
  }
  return ran;
}

Ran run_cordon(Scratch& scratch, const PolicySpec& policy, const std::vector<std::string>& command,
               const RunExtras& extras) {
  std::string policy_path = extras.with_policy ? scratch.policy_file(policy.toml()) : "";
  SpawnOptions o;
  o.argv = cordon_argv(scratch, policy_path, command, extras);
  o.set_env = extras.set_env;
  o.unset_env = extras.unset_env;
  o.inherit_fds = extras.inherit_fds;
  o.deadline = extras.deadline;
  return make_ran(run_process(o), extras.json);
}

Ran run_probe(Scratch& scratch, const PolicySpec& policy, const std::string& name,
              const std::vector<std::string>& args, const RunExtras& extras) {
  std::vector<std::string> command{probe(name)};
  command.insert(command.end(), args.begin(), args.end());
  Ran ran = run_cordon(scratch, policy, command, extras);
  require_ran(ran);
  return ran;
}

bool backend_would_run(Scratch& scratch, const PolicySpec* policy) {
  SpawnOptions o;
  o.argv = {cordon_cli(),  "explain",    "--backend", backend_name(),
            "--workspace", scratch.ws(), "--json"};
  if (policy) o.argv.insert(o.argv.end(), {"--policy", scratch.policy_file(policy->toml())});
  auto setup = backend_flags(scratch);
  o.argv.insert(o.argv.end(), setup.begin(), setup.end());
  Exit explained = run_process(o);
  INFO("cordon explain: status " << explained.status << "\n" << explained.out << explained.err);
  REQUIRE((explained.status == 0 || explained.status == 125));
  if (explained.status == 0) return true;
  auto refusal = json::parse(explained.out).as_object().at("refusal");
  REQUIRE(refusal.is_object());
  WARN("the backend does not prove this policy here, so the refusal is tested: "
       << refusal.as_object().at("message").as_string().c_str());
  return false;
}

std::vector<std::string> explain_preview(Scratch& scratch, const PolicySpec& policy) {
  SpawnOptions o;
  o.argv = {cordon_cli(),  "explain",    "--backend", backend_name(),
            "--workspace", scratch.ws(), "--policy",  scratch.policy_file(policy.toml()),
            "--json"};
  auto setup = backend_flags(scratch);
  o.argv.insert(o.argv.end(), setup.begin(), setup.end());
  Exit explained = run_process(o);
  INFO("cordon explain: status " << explained.status << "\n" << explained.out << explained.err);
  REQUIRE(explained.status == 0);
  std::vector<std::string> lines;
  json::value v = json::parse(explained.out);
  for (const auto& l : v.as_object().at("preview").as_array())
    lines.emplace_back(l.as_string().c_str());
  return lines;
}

int start_allowance() {
  static const int allowance = [] {
    Scratch s;
    RunExtras plain;
    plain.json = false;
    auto quickest = std::chrono::milliseconds::max();
    for (int i = 0; i < 2; ++i) {
      Ran ran = run_cordon(s, confined(s.root()), {true_program()}, plain);
      INFO(ran.describe());
      REQUIRE(ran.proc.status == 0);
      quickest = std::min(quickest, ran.proc.wall);
    }
    if (quickest < std::chrono::milliseconds(100)) return 0;
    return static_cast<int>((4 * quickest.count() + 999) / 1000);
  }();
  return allowance;
}

std::string short_timeout(int seconds) { return std::to_string(seconds + start_allowance()) + "s"; }

Ran run_on_host(const std::string& name, const std::vector<std::string>& args) {
  SpawnOptions o;
  o.argv = {probe(name)};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.deadline = std::chrono::seconds(60);
  return make_ran(run_process(o), false);
}

void require_ran(const Ran& ran) {
  INFO(ran.describe());
  REQUIRE(ran.json.has_value());
  REQUIRE_FALSE(ran.json->error.has_value());
  REQUIRE(ran.json->backend == backend_name());
}

bool in_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

bool IsOk::match(const std::string& line) const { return line.rfind("OK", 0) == 0; }

std::string IsOk::describe() const { return "reports success (OK)"; }

bool IsErr::match(const std::string& line) const {
  if (line.rfind("ERR ", 0) != 0) return false;
  auto end = line.find(' ', 4);
  return names_.count(line.substr(4, end == std::string::npos ? end : end - 4)) > 0;
}

std::string IsErr::describe() const {
  std::string out = "reports a failure with errno";
  for (const auto& n : names_) out += " " + n;
  return out;
}

}  // namespace escape
