// run_invocation: the stages of one run, each a small step that either continues or refuses.
#include <cordon/runner.hpp>
#include <cordon/sdk/path_guard.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "own_state.hpp"

extern char** environ;

namespace cordon {

namespace fs = std::filesystem;

std::map<std::string, std::string> caller_environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string_view::npos && eq > 0)
      env.emplace(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
  }
  return env;
}

std::map<std::string, std::string> granted_environment(
    const Policy& policy, const std::map<std::string, std::string>& caller) {
  std::map<std::string, std::string> env = {
      {"PATH", kBaselinePath}, {"LANG", "C.UTF-8"}, {"TZ", "UTC"}};
  for (const auto& name : policy.env.pass)
    if (auto it = caller.find(name); it != caller.end()) env[name] = it->second;
  for (const auto& [name, value] : policy.env.set) env[name] = value;
  env.erase("HOME");  // the backend decides HOME: private, or the host's when asked
  return env;
}

boost::json::object backend_settings(const Policy& policy,
                                     const boost::json::object& config_backends,
                                     const std::string& name) {
  boost::json::object settings;
  if (auto* from_config = config_backends.if_contains(name);
      from_config && from_config->is_object())
    settings = from_config->as_object();
  if (auto* from_policy = policy.backends.if_contains(name);
      from_policy && from_policy->is_object())
    for (const auto& kv : from_policy->as_object()) settings[kv.key()] = kv.value();
  return settings;
}

Candidate evaluate(Registry& registry, const std::string& name, const boost::json::object& settings,
                   bool probe_remote) {
  Candidate c{name, false, std::nullopt, std::nullopt};
  const BackendEntry* entry = registry.find(name);
  if (!entry) return c;
  c.installed = true;
  c.locality = entry->locality;
  // A remote backend nobody asked for is never a candidate: it is not even contacted.
  if (c.locality == Locality::remote && !probe_remote) return c;
  if (auto probe = registry.probe_for(name, settings))
    c.probe = std::move(*probe);
  else
    c.error = entry->error;
  return c;
}

Decision choose_backend(Registry& registry, const DispatchRequest& request, bool probe_all,
                        std::vector<Candidate>* seen, const SettingsOf& settings_of) {
  std::vector<Candidate> candidates;
  for (const auto& name : dispatch_order(request).order) {
    candidates.push_back(evaluate(registry, name,
                                  settings_of ? settings_of(name) : boost::json::object(),
                                  asked_for(request, name)));
    if (!probe_all && judge(request.requirements, candidates.back()).satisfies) break;
  }
  // Only a refusal of an unknown name needs every name, and listing them loads nothing.
  std::vector<std::string> known;
  if (request.named && !candidates.front().installed) known = registry.names();
  Decision d = decide(request, candidates, known);
  if (seen) *seen = std::move(candidates);
  return d;
}

namespace {

RunOutcome refused(RunOutcome out, Error error) {
  out.result.error = std::move(error);
  return out;
}

// The workspace as resolve_workspace finds it (a planted symlink on the way is refused).
std::optional<Error> check_workspace(const fs::path& workspace, fs::path& resolved) {
  if (!workspace.is_absolute())
    return Error(code::kBadArgument,
                 "workspace '" + workspace.string() + "' is not an existing absolute directory",
                 "pass an existing directory to --workspace");
  try {
    resolved = resolve_workspace(workspace.string()).path;
    return std::nullopt;
  } catch (const Error& e) {
    return e;
  }
}

Decision refusal(Error error) {
  Decision d;
  d.refusal = std::move(error);
  return d;
}

Plan plan_of(const Invocation& inv, const fs::path& workspace, Policy policy, Requirements reqs,
             boost::json::object settings) {
  Plan plan;
  plan.env = granted_environment(policy, inv.caller_env);
  if (policy.limits.timeout)
    plan.deadline = std::chrono::steady_clock::now() + *policy.limits.timeout;
  plan.policy = std::move(policy);
  plan.requirements = std::move(reqs);
  plan.argv = inv.argv;
  plan.workspace = workspace;
  plan.stdin_data = inv.stdin_data;
  plan.host_home = inv.host_home;
  plan.settings = std::move(settings);
  plan.shell_unsafe = inv.shell_unsafe;
  plan.stop = inv.stop;
  return plan;
}

}  // namespace

Decision choose_for_run(Registry& registry, const DispatchRequest& request, const Policy& policy,
                        const boost::json::object& config_backends) {
  auto settings_of = [&](const std::string& name) {
    return backend_settings(policy, config_backends, name);
  };
  // A mistake in a named backend's settings says more than a refusal from the default target
  // they failed to replace.
  if (Backend* named = request.named ? registry.backend(*request.named) : nullptr)
    if (auto bad = named->settings_error(settings_of(*request.named))) return refusal(*bad);
  Decision d = choose_backend(registry, request, false, nullptr, settings_of);
  if (d.chosen)
    if (auto bad = registry.backend(*d.chosen)->settings_error(settings_of(*d.chosen)))
      return refusal(*bad);
  return d;
}

RunOutcome run_invocation(Registry& registry, const Invocation& inv, OutputSink& sink) {
  RunOutcome out;
  Policy policy = inv.policy;
  if (inv.timeout) {
    if (auto longer = timeout_loosening(policy, *inv.timeout, "the timeout"))
      return refused(std::move(out), *longer);
    policy.limits.timeout = inv.timeout;
  }
  out.requirements = derive_requirements(policy);
  for (const auto& extra : inv.extra_requirements)
    if (!requires_capability(out.requirements, extra.id)) out.requirements.push_back(extra);
  std::sort(out.requirements.begin(), out.requirements.end(),
            [](const Requirement& a, const Requirement& b) { return a.id < b.id; });
  if (auto bad = check_workspace(inv.workspace, out.workspace))
    return refused(std::move(out), *bad);
  DispatchRequest request{out.requirements, inv.backend, policy.backend.prefer, policy.name,
                          inv.dispatch_order};
  out.decision = choose_for_run(registry, request, policy, inv.config_backends);
  if (!out.decision.chosen) return refused(std::move(out), *out.decision.refusal);
  out.backend = *out.decision.chosen;
  Backend& backend = *registry.backend(out.backend);
  auto settings = backend_settings(policy, inv.config_backends, out.backend);
  std::vector<std::string> state_notes;
  auto protected_paths =
      detail::own_state_paths(registry, inv.policy, inv.protected_paths, state_notes);
  // The deadline starts when the command does, not when probing started.
  Plan plan = plan_of(inv, out.workspace, std::move(policy), out.requirements, std::move(settings));
  plan.protected_paths = std::move(protected_paths);
  out.result = backend.run(plan, sink);
  out.result.notes.insert(out.result.notes.end(), state_notes.begin(), state_notes.end());
  out.result.notes.insert(out.result.notes.end(), inv.notes.begin(), inv.notes.end());
  for (const auto& a : advisory_clauses(inv.policy)) out.result.notes.push_back(advisory_note(a));
  return out;
}

namespace {

// The plan a run of `inv` would give backend `name`, before it runs: the same workspace
// resolution, settings and protected paths.
Plan plan_before_run(Registry& registry, const Invocation& inv, const fs::path& workspace,
                     const std::string& name) {
  std::vector<std::string> state_notes;
  auto protected_paths =
      detail::own_state_paths(registry, inv.policy, inv.protected_paths, state_notes);
  Plan plan = plan_of(inv, workspace, inv.policy, derive_requirements(inv.policy),
                      backend_settings(inv.policy, inv.config_backends, name));
  plan.protected_paths = std::move(protected_paths);
  return plan;
}

}  // namespace

RunPreview preview_invocation(Registry& registry, const Invocation& inv, const std::string& name) {
  Backend* backend = registry.backend(name);
  fs::path workspace;
  if (!backend || check_workspace(inv.workspace, workspace)) return {};
  return backend->preview(plan_before_run(registry, inv, workspace, name));
}

std::optional<std::string> compile_invocation(Registry& registry, const Invocation& inv,
                                              const std::string& name) {
  Backend* backend = registry.backend(name);
  if (!backend) {
    const auto* entry = registry.find(name);
    if (entry && entry->error) throw *entry->error;
    throw Error(code::kUnknownBackend, "no backend named '" + name + "'",
                "cordon backends lists them");
  }
  fs::path workspace;
  if (auto bad = check_workspace(inv.workspace, workspace)) throw *bad;
  return backend->compile(plan_before_run(registry, inv, workspace, name));
}

}  // namespace cordon
