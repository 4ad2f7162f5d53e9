// Requests to, and results from, a remote cordon. Pure.
#include "remote_cordon.hpp"

#include <cordon/policy_io.hpp>
#include <cordon/request.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <chrono>

#include "remote_line.hpp"

namespace cordon::ssh {

namespace json = boost::json;

namespace {

constexpr std::size_t kMaxDiagnostics = 8192;

// `path` as the remote cordon should read it: beneath the local workspace it is beneath the
// remote one. A `~` path stays as it is: to_json() writes it as `~` again.
std::string rebased(const std::string& path, const std::string& workspace, const Filesystem& f) {
  if (f.from_home.count(path) || workspace == "/") return path;
  if (path == workspace) return "{workspace}";
  if (path.rfind(workspace + "/", 0) == 0) return "{workspace}" + path.substr(workspace.size());
  return path;
}

json::object remote_policy(const Plan& plan) {
  Policy p = plan.policy;
  const std::string ws = plan.workspace.lexically_normal().string();
  for (auto* list : {&p.filesystem.read, &p.filesystem.write, &p.filesystem.blocked})
    for (auto& path : *list) path = rebased(path, ws, p.filesystem);
  // Which backend runs it there is the request's to say; other backends' settings stay here.
  p.backends = {};
  p.backend.prefer.clear();
  p.extends.reset();
  return json::parse(to_json(p)).as_object();
}

json::value bytes(const std::string& s) {
  if (is_utf8(s)) return json::string(s);
  return json::object{{"base64", encode_base64(s)}};
}

template <typename T>
std::optional<T> number(const json::object& o, const char* key) {
  const auto* v = o.if_contains(key);
  if (!v || !v->is_number()) return std::nullopt;
  return v->to_number<T>();
}

bool flag(const json::object& o, const char* key) {
  const auto* v = o.if_contains(key);
  return v && v->is_bool() && v->as_bool();
}

std::string text(const json::object& o, const char* key) {
  const auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

}  // namespace

std::optional<ProbeResult> remote_proofs(const std::string& backends_json, std::string& why) {
  json::value doc;
  try {
    doc = json::parse(backends_json);
  } catch (const std::exception&) {
    why = "its 'cordon backends --json' printed no JSON";
    return std::nullopt;
  }
  const auto* list = doc.is_object() ? doc.as_object().if_contains("backends") : nullptr;
  if (!list || !list->is_array()) {
    why = "its 'cordon backends --json' lists no backends";
    return std::nullopt;
  }
  for (const auto& b : list->as_array()) {
    if (!b.is_object() || text(b.as_object(), "name") != kRemoteBackend) continue;
    const auto& o = b.as_object();
    if (!flag(o, "available")) {
      why = std::string("its ") + kRemoteBackend + " backend is unavailable: " + text(o, "reason");
      return std::nullopt;
    }
    ProbeResult r;
    r.available = true;
    if (const auto* proofs = o.if_contains("proofs"); proofs && proofs->is_array())
      for (const auto& p : proofs->as_array())
        if (p.is_object())
          r.proofs.push_back({text(p.as_object(), "capability"), flag(p.as_object(), "proven"),
                              text(p.as_object(), "evidence")});
    return r;
  }
  why = std::string("it has no ") + kRemoteBackend + " backend";
  return std::nullopt;
}

std::string request_json(const Plan& plan, const std::string& remote_workspace) {
  json::object req;
  json::array argv;
  for (const auto& a : plan.argv) argv.push_back(bytes(a));
  req["argv"] = std::move(argv);
  req["policy"] = remote_policy(plan);
  req["backend"] = kRemoteBackend;
  req["workspace"] = remote_workspace;
  if (plan.deadline) {
    // Rounded down: a request may only shorten the policy's timeout, never lengthen it.
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        *plan.deadline - std::chrono::steady_clock::now());
    req["timeout"] = std::to_string(std::max<long long>(1, left.count())) + "ms";
  }
  if (plan.stdin_data) req["stdin"] = json::object{{"base64", encode_base64(*plan.stdin_data)}};
  json::object env;
  for (const auto& name : plan.policy.env.pass)
    if (auto it = plan.env.find(name); it != plan.env.end()) env[name] = it->second;
  if (!env.empty()) req["env"] = std::move(env);
  return json::serialize(req);
}

std::string cordon_line(const std::string& cordon_path) {
  std::string script = "printf '" + std::string(kPidMarker) + "%s\\n' \"$$\"\nexec " +
                       sh_quote(cordon_path) + " run --request - --framed\n";
  return "exec /bin/sh -c " + sh_quote(script) + " cordon-ssh";
}

void FramedChannelSink::write(Stream stream, std::string_view chunk) {
  if (stream == Stream::err) {
    diagnostics_.append(
        chunk.substr(0, kMaxDiagnostics - std::min(kMaxDiagnostics, diagnostics_.size())));
    return;
  }
  if (broken_) return;
  try {
    for (auto& f : reader_.feed(chunk)) {
      if (f.tag == sdk::FrameTag::result) {
        auto v = json::parse(f.payload);
        if (!v.is_object()) throw Error(code::kBackendFault, "the result frame is not an object");
        result_ = std::move(v.as_object());
      } else if (f.tag == sdk::FrameTag::accepted) {
        accepted_ = true;
      } else if (f.tag == sdk::FrameTag::out || f.tag == sdk::FrameTag::err) {
        sink_.write(f.tag == sdk::FrameTag::out ? Stream::out : Stream::err, f.payload);
      }
    }
  } catch (const std::exception& e) {
    broken_ = true;
    diagnostics_ += std::string("\n") + e.what();
  }
}

void merge_result(const json::object& result, const std::string& host, RunResult& r) {
  r.exit_code = number<int>(result, "exit_code").value_or(-1);
  r.signal = number<int>(result, "signal").value_or(0);
  r.timed_out = flag(result, "timed_out");
  r.stdout_truncated = r.stdout_truncated || flag(result, "stdout_truncated");
  r.stderr_truncated = r.stderr_truncated || flag(result, "stderr_truncated");
  r.stdout_bytes = number<std::uint64_t>(result, "stdout_bytes").value_or(0);
  r.stderr_bytes = number<std::uint64_t>(result, "stderr_bytes").value_or(0);
  if (const auto* res = result.if_contains("resources"); res && res->is_object()) {
    const auto& o = res->as_object();
    r.peak_memory_bytes = number<std::uint64_t>(o, "peak_memory_bytes");
    r.cpu_user_seconds = number<double>(o, "cpu_user_seconds");
    r.cpu_system_seconds = number<double>(o, "cpu_system_seconds");
    if (r.cpu_user_seconds && r.cpu_system_seconds)
      r.cpu_seconds = *r.cpu_user_seconds + *r.cpu_system_seconds;
    r.processes_started = number<std::uint64_t>(o, "processes_started");
  }
  if (const auto* report = result.if_contains("report"); report && report->is_array())
    for (const auto& e : report->as_array())
      if (e.is_object())
        r.report.push_back(
            {text(e.as_object(), "capability"),
             "the remote cordon on " + host + ": " + text(e.as_object(), "mechanism")});
  if (const auto* notes = result.if_contains("notes"); notes && notes->is_array())
    for (const auto& n : notes->as_array())
      if (n.is_string()) r.notes.push_back("remote: " + std::string(n.as_string()));
  if (const auto* e = result.if_contains("error"); e && e->is_object()) {
    std::string code = text(e->as_object(), "code");
    r.error =
        Error(code.empty() ? code::kBackendFault : code,
              "on " + host + ": " + text(e->as_object(), "message"), text(e->as_object(), "hint"));
  }
}

}  // namespace cordon::ssh
