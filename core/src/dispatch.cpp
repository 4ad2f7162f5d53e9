// The dispatch decision. Pure: no I/O, no syscalls; the probes are the caller's business.
#include <cordon/dispatch.hpp>
#include <cordon/registry.hpp>
#include <cordon/sdk/capabilities.hpp>
#include <cordon/sdk/policy.hpp>

#include <algorithm>
#include <utility>

namespace cordon {

namespace {

bool contains(const std::vector<std::string>& list, const std::string& name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

const Candidate* lookup(const std::vector<Candidate>& candidates, const std::string& name) {
  for (const auto& c : candidates)
    if (c.name == name) return &c;
  return nullptr;
}

constexpr const char* kRemoteUnasked =
    "a remote backend, chosen only when named (--backend) or preferred (backend.prefer)";

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

std::string of_policy(const DispatchRequest& req) {
  return req.policy_name.empty() ? "" : " of policy '" + req.policy_name + "'";
}

std::string shortfall_lines(const Verdict& v, const std::string& pad) {
  std::string out;
  for (const auto& s : v.unproven)
    out += "\n" + pad + s.requirement.id + " (" + s.requirement.clause + "): " + s.evidence;
  return out;
}

std::string plural(std::size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

Error unknown_backend(const std::string& name, const std::vector<std::string>& known) {
  return Error(
      code::kUnknownBackend,
      "no backend named '" + name + "' (known: " + (known.empty() ? "none" : join(known)) + ")",
      "cordon backends lists every backend found and where it searched");
}

// The key of [limits] that asked for a limit requirement: "limits.memory_mb = 512" names
// "memory_mb"; nullopt for a requirement that is not a limit.
std::optional<std::string> limit_key(const Requirement& r) {
  constexpr std::string_view kPrefix = "limits.";
  if (!r.id.starts_with("limit.") || !r.clause.starts_with(kPrefix)) return std::nullopt;
  std::string rest = r.clause.substr(kPrefix.size());
  return rest.substr(0, rest.find(' '));
}

bool needs_cgroup(const std::string& id) {
  return id == cap::limit_memory || id == cap::limit_processes || id == cap::limit_cpu_share;
}

// When a backend falls short on limits alone, the policy that runs on it without them: the
// way out for a user whose host gives cordon no cgroup. Nothing is dropped silently; the user
// writes it down.
std::optional<std::string> drop_limits_hint(const DispatchRequest& req, const Verdict& v) {
  std::string lines;
  std::size_t count = 0;
  bool cgroup = false;
  for (const auto& s : v.unproven) {
    auto key = limit_key(s.requirement);
    if (!key) return std::nullopt;
    lines += "\n      " + *key + " = \"unlimited\"";
    cgroup = cgroup || needs_cgroup(s.requirement.id);
    ++count;
  }
  if (count == 0) return std::nullopt;
  const std::string limit = count == 1 ? "the limit" : "the limits";
  const auto& presets = preset_names();
  bool preset = std::find(presets.begin(), presets.end(), req.policy_name) != presets.end();
  std::string hint = "backend '" + v.name + "' proves everything else; to run without " + limit;
  if (preset)
    hint +=
        ", write this to a .toml file and pass it with --policy:\n      version = 1\n"
        "      [policy]\n      extends = \"" +
        req.policy_name + "\"\n      [limits]" + lines;
  else
    hint += ", write in the policy's [limits]:" + lines;
  if (cgroup)
    hint += "\n    or keep " + limit +
            ": on a cgroup v2 host, run cordon in a delegated scope that it may divide "
            "(systemd-run --user --scope -p Delegate=yes cordon run ...)";
  return hint;
}

Error refuse_named(const DispatchRequest& req, const Verdict& v, const Candidate& c) {
  if (c.error) return *c.error;
  if (c.probe && !c.probe->available && c.probe->unusable) return *c.probe->unusable;
  if (c.probe && !c.probe->available)
    return Error(code::kBackendUnavailable,
                 "backend '" + v.name + "' is not available here: " + c.probe->reason,
                 "cordon backends shows what each backend needs");
  return Error(code::kUnproven,
               "backend '" + v.name + "' cannot prove " + plural(v.unproven.size(), "requirement") +
                   of_policy(req) + ":" + shortfall_lines(v, "  "),
               drop_limits_hint(req, v).value_or(
                   "cordon explain without --backend shows whether another backend proves them; "
                   "otherwise relax the policy"));
}

Error refuse_unnamed(const DispatchRequest& req, const std::vector<Verdict>& passed) {
  if (passed.empty())
    return Error(code::kUnproven,
                 "no backend to try" +
                     (req.policy_name.empty() ? "" : " for policy '" + req.policy_name + "'") +
                     ": the policy prefers none and the configuration's [dispatch] order is empty",
                 "name one with --backend, or list backends in [dispatch] order of the "
                 "configuration");
  std::string lines;
  std::optional<std::string> hint;
  for (const auto& v : passed) {
    lines += "\n" + describe(v, 2);
    if (!hint) hint = drop_limits_hint(req, v);
  }
  return Error(code::kUnproven,
               "no backend proves every requirement" + of_policy(req) + ":" + lines,
               hint.value_or("name one with --backend to see its evidence, or relax the policy"));
}

}  // namespace

bool asked_for(const DispatchRequest& req, const std::string& name) {
  return req.named == name || contains(req.prefer, name);
}

CandidateOrder dispatch_order(const DispatchRequest& req) {
  CandidateOrder out;
  if (req.named) {
    out.order.push_back(*req.named);
    return out;
  }
  bool none_skipped = false;
  auto add = [&](const std::string& name) {
    if (contains(out.order, name)) return;
    if (name != kNoneBackend) return out.order.push_back(name);
    if (!std::exchange(none_skipped, true))
      out.skipped.emplace_back(name,
                               "'none' isolates nothing and runs only when named (--backend none)");
  };
  for (const auto& name : req.prefer) add(name);
  for (const auto& name : req.order) add(name);
  return out;
}

Verdict judge(const Requirements& requirements, const Candidate& c) {
  Verdict v{c.name, false, {}, {}};
  if (!c.installed) {
    v.reason = "not installed (no cordon-backend-" + c.name + ".so on the plugin path)";
  } else if (c.error) {
    v.reason = "unusable: " + std::string(c.error->what()) + " [" + c.error->code() + "]";
  } else if (!c.probe) {
    v.reason = "not probed";
  } else if (!c.probe->available) {
    v.reason = "not available here: " + c.probe->reason;
  } else {
    for (const auto& r : requirements)
      if (!c.probe->proves(r.id)) v.unproven.push_back({r, c.probe->evidence(r.id)});
    if (v.unproven.empty())
      v.satisfies = true;
    else
      v.reason = "cannot prove " + plural(v.unproven.size(), "requirement");
  }
  return v;
}

Verdict assess(const DispatchRequest& req, const Candidate& c) {
  if (c.installed && c.locality == Locality::remote && !asked_for(req, c.name))
    return Verdict{c.name, false, kRemoteUnasked, {}};
  return judge(req.requirements, c);
}

std::string describe(const Verdict& v, int indent) {
  std::string pad(static_cast<std::size_t>(indent), ' ');
  if (v.satisfies) return pad + v.name + ": proves every requirement";
  if (v.unproven.empty()) return pad + v.name + ": " + v.reason;
  return pad + v.name + " cannot prove:" + shortfall_lines(v, pad + "  ");
}

Decision decide(const DispatchRequest& req, const std::vector<Candidate>& candidates,
                const std::vector<std::string>& known) {
  Decision d;
  auto order = dispatch_order(req);
  for (const auto& [name, why] : order.skipped) d.passed_over.push_back({name, false, why, {}});
  for (const auto& name : order.order) {
    const Candidate* found = lookup(candidates, name);
    Candidate absent{name, false, std::nullopt, std::nullopt};
    const Candidate& c = found ? *found : absent;
    Verdict v = assess(req, c);
    if (v.satisfies) {
      d.chosen = name;
      return d;
    }
    if (req.named) {
      d.refusal = c.installed ? refuse_named(req, v, c) : unknown_backend(name, known);
      d.passed_over.push_back(std::move(v));
      return d;
    }
    d.passed_over.push_back(std::move(v));
  }
  d.refusal = refuse_unnamed(req, d.passed_over);
  return d;
}

}  // namespace cordon
