// Running the corpus against one backend (certify_run.hpp).
#include "certify_run.hpp"

#include <cordon/policy_loader.hpp>
#include <cordon/runner.hpp>
#include <cordon/sdk/error.hpp>
#include <cordon/sdk/requirements.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <thread>

#include "run_output.hpp"
#include "runtime_options.hpp"

namespace cordon::cli {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// No case may run longer than this, whatever the backend does with the policy's timeout.
constexpr auto kCaseDeadline = std::chrono::seconds(30);

// The policy every case extends unless --policy names another: it requires nothing but what
// every run requires (env.grant, identity.unprivileged), so each file's fragment adds exactly
// the clause under test.
constexpr const char* kNeutralPolicy = R"(version = 1
[policy]
name = "certify-neutral"
[limits]
max_output_bytes = 65536
[filesystem]
read = "host"
write = "host"
home = "host"
[network]
allow = true
)";

struct Context {
  const CertifyTarget& target;
  HostFixtures& host;
  std::string base;  ///< what every case policy extends
};

std::string substitute(std::string text, const Context& ctx, const fs::path& ws) {
  auto values = ctx.host.values();
  values["{workspace}"] = ws.string();
  values["{workspace_name}"] = ws.filename().string();
  for (const auto& [key, value] : values)
    for (auto pos = text.find(key); pos != std::string::npos; pos = text.find(key, pos))
      text.replace(pos, key.size(), value), pos += value.size();
  return text;
}

Policy case_policy(const std::string& fragment, const Context& ctx, const fs::path& ws) {
  std::string text =
      "version = 1\n[policy]\nextends = \"" + ctx.base + "\"\n" + substitute(fragment, ctx, ws);
  Policy p = load_policy_text(text, (ws / "certify-case.toml").string(), ws);
  return resolve_paths(std::move(p), PathContext{ws, host_home()});
}

struct Shown {
  RunOutcome out;
  std::string out_text;
};

// Kills the run at kCaseDeadline unless it ended first; with `stop_after`, asks it to
// terminate then and kills it a second later, as a caller stopping a run does.
class Watchdog {
 public:
  Watchdog(std::shared_ptr<StopToken> stop, std::optional<double> stop_after)
      : thread_([this, stop, stop_after] {
          std::unique_lock lock(mutex_);
          auto ended = [this] { return done_; };
          if (stop_after) {
            auto first = std::chrono::duration<double>(*stop_after);
            if (cv_.wait_for(lock, first, ended)) return;
            stop->request(StopToken::Level::terminate);
            if (cv_.wait_for(lock, std::chrono::seconds(1), ended)) return;
            stop->request(StopToken::Level::kill);
          }
          if (!cv_.wait_for(lock, kCaseDeadline, ended)) stop->request(StopToken::Level::kill);
        }) {}
  ~Watchdog() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

Shown run_probe(const Context& ctx, Policy policy, const fs::path& ws, const Probe& probe,
                const std::vector<std::string>& requires_ids) {
  Invocation inv;
  for (const auto& id : requires_ids) inv.extra_requirements.push_back({id, "certify's corpus"});
  inv.policy = std::move(policy);
  inv.argv = {probe.program ? substitute(*probe.program, ctx, ws) : (ws / "cordon-probe").string()};
  for (const auto& a : probe.args) inv.argv.push_back(substitute(a, ctx, ws));
  inv.workspace = ws;
  inv.backend = ctx.target.backend;
  inv.stdin_data = probe.stdin_data;
  inv.caller_env = caller_environment();
  inv.caller_env["CORDON_CERTIFY_CANARY"] = "inherited";  // env.grant: must never arrive
  inv.host_home = host_home();
  inv.config_backends = ctx.target.config_backends;
  inv.stop = std::make_shared<StopToken>();
  CollectSink sink;
  Shown shown;
  {
    Watchdog watchdog(inv.stop, probe.stop_after);
    shown.out = run_invocation(*ctx.target.registry, inv, sink);
  }
  shown.out_text = std::move(sink.out);
  return shown;
}

bool reported_ok(const std::string& out) { return out.rfind("ok ", 0) == 0; }

std::string first_line(const std::string& out) {
  std::string line = out.substr(0, out.find('\n'));
  return line.size() > 120 ? line.substr(0, 120) + "..." : line;
}

std::string observed(const Shown& s) {
  const RunResult& r = s.out.result;
  if (r.error) return "cordon: " + r.error->code() + " " + r.error->message();
  std::string text = r.timed_out ? "timed out"
                     : r.signal  ? "signal " + std::to_string(r.signal)
                                 : "exit " + std::to_string(r.exit_code);
  std::string line = first_line(s.out_text);
  return line.empty() ? text : text + ", \"" + line + "\"";
}

bool one_met(const std::string& expect, const RunResult& r, const std::string& out) {
  if (expect.rfind("status:", 0) == 0) return r.cli_status() == std::stoi(expect.substr(7));
  if (expect == "refused") return r.error && r.error->code().rfind("CRD1", 0) == 0;
  if (r.error) return false;
  if (expect == "ok") return r.exit_code == 0 && reported_ok(out);
  if (expect == "denied") return !reported_ok(out) && (r.exit_code != 0 || r.signal != 0);
  if (expect == "timeout") return r.timed_out;
  if (expect == "truncated") return r.stdout_truncated;
  if (expect == "signal") return r.signal != 0;
  if (expect.rfind("exit:", 0) == 0) return r.exit_code == std::stoi(expect.substr(5));
  if (expect.rfind("signal:", 0) == 0) {
    int n = std::stoi(expect.substr(7));
    return r.signal == n || r.exit_code == 128 + n;
  }
  return false;
}

// `expect` may join several expectations with '|': any of them will do.
bool expectation_met(const std::string& expect, const RunResult& r, const std::string& out) {
  std::size_t start = 0;
  while (true) {
    std::size_t bar = expect.find('|', start);
    if (one_met(expect.substr(start, bar == std::string::npos ? bar : bar - start), r, out))
      return true;
    if (bar == std::string::npos) return false;
    start = bar + 1;
  }
}

std::uintmax_t size_of(const fs::path& p) {
  std::error_code ec;
  auto n = fs::file_size(p, ec);
  return ec ? 0 : n;
}

// Empty when the run showed what `probe` expects; else what it showed instead.
std::string judge(const Probe& probe, const Shown& s, const Context& ctx, const fs::path& ws) {
  const RunResult& r = s.out.result;
  if (!expectation_met(probe.expect, r, s.out_text))
    return "expected " + probe.expect + ", saw " + observed(s);
  for (const auto& has : probe.stdout_has)
    if (s.out_text.find(substitute(has, ctx, ws)) == std::string::npos)
      return "output lacks \"" + has + "\": " + observed(s);
  for (const auto& lacks : probe.stdout_lacks)
    if (s.out_text.find(substitute(lacks, ctx, ws)) != std::string::npos)
      return "output shows \"" + lacks + "\": " + observed(s);
  const std::string& out = s.out_text;
  if (probe.stdout_ends_with && (out.size() < probe.stdout_ends_with->size() ||
                                 out.compare(out.size() - probe.stdout_ends_with->size(),
                                             std::string::npos, *probe.stdout_ends_with) != 0))
    return "output does not end with \"" + *probe.stdout_ends_with + "\": " + observed(s);
  if (probe.stdout_max_bytes && out.size() > static_cast<std::uint64_t>(*probe.stdout_max_bytes))
    return std::to_string(out.size()) + " bytes of output reached cordon's caller, more than " +
           std::to_string(*probe.stdout_max_bytes);
  if (probe.stdout_total && r.stdout_bytes != static_cast<std::uint64_t>(*probe.stdout_total))
    return "the command's output counted " + std::to_string(r.stdout_bytes) + " bytes, not " +
           std::to_string(*probe.stdout_total);
  if (probe.stops_growing) {
    fs::path file = substitute(*probe.stops_growing, ctx, ws);
    auto before = size_of(file);
    if (before == 0) return "the attack never wrote " + file.string() + ": the case proves nothing";
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    if (size_of(file) != before)
      return "a process of the run is still alive: " + file.string() + " grows after the run ended";
  }
  return {};
}

void apply_setup(const std::vector<SetupStep>& steps, const Context& ctx, const fs::path& ws) {
  for (const auto& step : steps) {
    fs::path path = substitute(step.path, ctx, ws);
    if (path.is_relative()) path = ws / path;
    for (fs::path dir = path.parent_path(); !fs::exists(dir); dir = dir.parent_path()) {
      fs::create_directories(dir);
      fs::permissions(dir, fs::perms(0777));
    }
    switch (step.kind) {
      case SetupStep::Kind::dir:
        fs::create_directories(path);
        fs::permissions(path, fs::perms(0777));  // whoever the sandbox runs as may write
        break;
      case SetupStep::Kind::symlink:
        fs::create_symlink(substitute(step.text, ctx, ws), path);
        break;
      case SetupStep::Kind::hard_link:
        fs::create_hard_link(substitute(step.text, ctx, ws), path);
        break;
      case SetupStep::Kind::probe:
        fs::copy_file(ws / "cordon-probe", path);
        fs::permissions(path, fs::perms(0755));
        break;
      case SetupStep::Kind::file: {
        std::ofstream(path) << step.text;
        fs::permissions(path, fs::perms(0666));
        break;
      }
    }
  }
}

std::string missing_need(const Case& c, const Context& ctx) {
  for (const auto& need : c.needs)
    if (auto why = ctx.host.missing(need); !why.empty()) return why;
  return {};
}

CaseOutcome run_case(const CapabilityCases& cap, const Case& c, const Context& ctx) {
  CaseOutcome o;
  o.name = c.name;
  if (auto why = missing_need(c, ctx); !why.empty()) {
    o.status = CaseOutcome::Status::skipped;
    o.evidence = why;
    return o;
  }
  fs::path ws = ctx.host.new_workspace();
  apply_setup(cap.setup, ctx, ws);
  apply_setup(c.setup, ctx, ws);
  Shown attack = run_probe(ctx, case_policy(c.attack.policy.value_or(cap.policy), ctx, ws), ws,
                           c.attack, cap.requires_ids);
  std::string failure = judge(c.attack, attack, ctx, ws);
  o.evidence = "attack: " + observed(attack);
  if (failure.empty() && c.allowed) {
    Shown twin = run_probe(ctx, case_policy(c.allowed->policy.value_or(cap.policy), ctx, ws), ws,
                           *c.allowed, cap.requires_ids);
    std::string f = judge(*c.allowed, twin, ctx, ws);
    if (!f.empty() && c.allowed_is_control) {
      o.status = CaseOutcome::Status::skipped;
      o.evidence = "the target cannot be reached here even where allowed: " + f;
      return o;
    }
    if (!f.empty()) failure = "allowed twin: " + f;
    if (f.empty()) o.evidence += "; allowed twin: " + observed(twin);
  } else if (!failure.empty()) {
    failure = "attack: " + failure;
  }
  o.status = failure.empty() ? CaseOutcome::Status::held : CaseOutcome::Status::failed;
  if (!failure.empty()) o.evidence = failure;
  return o;
}

// The refusal's line that names `id` (an unproven requirement's), else its first line.
std::string refusal_line(const Error& error, const std::string& id) {
  const std::string& m = error.message();
  auto at = m.find(" " + id + " (");
  if (at == std::string::npos) return first_line(m);
  auto end = m.find('\n', at);
  std::string line = m.substr(at + 1, end == std::string::npos ? end : end - at - 1);
  return line.size() > 160 ? line.substr(0, 160) + "..." : line;
}

// An unclaimed capability: a run requiring it must be refused before anything runs.
void check_refused(const CapabilityCases& cap, const Context& ctx, CapabilityOutcome& o) {
  fs::path ws = ctx.host.new_workspace();
  Probe exit_at_once;
  exit_at_once.args = {"exit", "0"};
  Shown s = run_probe(ctx, case_policy(cap.policy, ctx, ws), ws, exit_at_once, cap.requires_ids);
  const auto& error = s.out.result.error;
  // Refused for this capability: an unproven-requirement refusal must name it, not only another
  // id the file's policy asks for too.
  bool refused = error && error->code().rfind("CRD1", 0) == 0 &&
                 (error->code() != code::kUnproven ||
                  error->message().find(" " + cap.capability + " (") != std::string::npos);
  o.status = refused ? CapabilityOutcome::Status::refused : CapabilityOutcome::Status::not_refused;
  o.evidence = refused ? "refused: " + error->code() + " " + refusal_line(*error, cap.capability)
                       : "a policy requiring it was not refused: " + observed(s);
}

void run_claimed(const CapabilityCases& cap, const Context& ctx, CapabilityOutcome& o) {
  int held = 0, failed = 0;
  for (const auto& c : cap.cases) {
    o.cases.push_back(run_case(cap, c, ctx));
    held += o.cases.back().status == CaseOutcome::Status::held;
    failed += o.cases.back().status == CaseOutcome::Status::failed;
  }
  o.status = failed ? CapabilityOutcome::Status::failed
             : held ? CapabilityOutcome::Status::held
                    : CapabilityOutcome::Status::untested;
}

// The corpus file's policy must require its capability, or its cases prove nothing.
bool requires_own_capability(const CapabilityCases& cap, const Context& ctx) {
  const auto& ids = cap.requires_ids;
  if (std::find(ids.begin(), ids.end(), cap.capability) != ids.end()) return true;
  // Loading and deriving are pure: a workspace path that is never made will do.
  fs::path ws = fs::path(ctx.host.values().at("{outside}")).parent_path() / "requirements-only";
  return requires_capability(derive_requirements(case_policy(cap.policy, ctx, ws)), cap.capability);
}

}  // namespace

std::vector<CapabilityOutcome> certify_all(const CertifyTarget& target,
                                           const std::vector<CapabilityCases>& corpus,
                                           HostFixtures& host) {
  Context ctx{target, host, target.base_policy};
  if (ctx.base.empty()) {
    fs::path base = host.values().at("{outside}") + "/../certify-neutral.toml";
    std::ofstream(base) << kNeutralPolicy;
    ctx.base = fs::weakly_canonical(base).string();
  }
  const ProbeResult* probe = target.probe;
  std::vector<CapabilityOutcome> out;
  for (const auto& cap : corpus) {
    CapabilityOutcome o;
    o.capability = cap.capability;
    for (const auto& p : probe ? probe->proofs : std::vector<Proof>{})
      if (p.capability == cap.capability && p.proven) o.claimed = true, o.evidence = p.evidence;
    auto start = Clock::now();
    // run.*: what every backend does for every run; nothing to claim or require.
    bool semantics = cap.capability.rfind("run.", 0) == 0;
    if (semantics) o.claimed = true, o.evidence = "every run";
    if (!semantics && !requires_own_capability(cap, ctx)) {
      o.evidence = "corpus error: " + cap.file.string() + "'s policy does not require it";
    } else if (o.claimed) {
      run_claimed(cap, ctx, o);
    } else {
      check_refused(cap, ctx, o);
    }
    o.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    out.push_back(std::move(o));
  }
  return out;
}

const char* status_name(CapabilityOutcome::Status s) {
  switch (s) {
    case CapabilityOutcome::Status::held:
      return "held";
    case CapabilityOutcome::Status::failed:
      return "FAILED";
    case CapabilityOutcome::Status::untested:
      return "untested";
    case CapabilityOutcome::Status::refused:
      return "refused";
    case CapabilityOutcome::Status::not_refused:
      return "NOT REFUSED";
  }
  return "?";
}

const char* status_name(CaseOutcome::Status s) {
  switch (s) {
    case CaseOutcome::Status::held:
      return "held";
    case CaseOutcome::Status::failed:
      return "FAILED";
    case CaseOutcome::Status::skipped:
      return "skipped";
  }
  return "?";
}

}  // namespace cordon::cli
