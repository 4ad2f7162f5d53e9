// `cordon explain`: which backend would run a policy, why each other one was passed over, and
// the requirements — without running anything.
#include <cordon/runner.hpp>

#include <boost/json/serialize.hpp>
#include <iomanip>
#include <iostream>
#include <memory>

#include "runtime_options.hpp"
#include "verbs.hpp"

namespace cordon::cli {

namespace {

struct ExplainArgs {
  std::optional<std::string> policy, backend, workspace, timeout;
  bool json = false;
  RuntimeOptions runtime;
};

struct Explanation {
  Policy policy;
  Requirements requirements;
  DispatchRequest request;
  Decision decision;
  std::vector<Candidate> candidates;
  RunPreview preview;  ///< what the chosen backend would decide before a run
};

boost::json::object explanation_json(const Explanation& x) {
  boost::json::array reqs, verdicts;
  for (const auto& r : x.requirements)
    reqs.push_back(boost::json::object{{"capability", r.id}, {"clause", r.clause}});
  for (const auto& c : x.candidates) {
    Verdict v = assess(x.request, c);
    boost::json::array unproven;
    for (const auto& s : v.unproven)
      unproven.push_back(boost::json::object{{"capability", s.requirement.id},
                                             {"clause", s.requirement.clause},
                                             {"evidence", s.evidence}});
    verdicts.push_back(boost::json::object{{"name", v.name},
                                           {"satisfies", v.satisfies},
                                           {"reason", v.reason},
                                           {"unproven", std::move(unproven)}});
  }
  boost::json::object o{{"policy", x.policy.name},
                        {"requirements", std::move(reqs)},
                        {"candidates", std::move(verdicts)}};
  o["backend"] = x.decision.chosen ? boost::json::value(*x.decision.chosen) : boost::json::value();
  boost::json::array facts, warnings;
  for (const auto& line : x.preview.facts) facts.push_back(boost::json::string(line));
  for (const auto& w : x.preview.warnings) warnings.push_back(boost::json::string(w));
  o["preview"] = std::move(facts);
  o["warnings"] = std::move(warnings);
  o["refusal"] = nullptr;
  if (x.decision.refusal)
    o["refusal"] = boost::json::object{{"code", x.decision.refusal->code()},
                                       {"message", x.decision.refusal->what()},
                                       {"hint", x.decision.refusal->hint()}};
  return o;
}

void print_explanation(const Explanation& x) {
  std::cout << "policy '" << x.policy.name << "' requires:\n";
  for (const auto& r : x.requirements)
    std::cout << "  " << std::left << std::setw(23) << r.id << r.clause << "\n";
  std::cout << "\n";
  if (x.decision.chosen) {
    std::cout << "would run on: " << *x.decision.chosen << "\n";
    const auto& facts = x.preview.facts;
    if (!facts.empty()) std::cout << "\nas " << *x.decision.chosen << " would run it:\n";
    for (const auto& line : facts) std::cout << "  " << line << "\n";
    for (const auto& w : x.preview.warnings) std::cout << "warning: " << w << "\n";
  } else
    std::cout << "would be refused:\n" << x.decision.refusal->render() << "\n";
  std::cout << "\ncandidates, in order:\n";
  for (const auto& [name, why] : dispatch_order(x.request).skipped)
    std::cout << "  " << name << ": skipped: " << why << "\n";
  for (const auto& c : x.candidates) std::cout << describe(assess(x.request, c), 2) << "\n";
}

int explain_main(const ExplainArgs& a) {
  Explanation x;
  std::unique_ptr<Registry> registry;
  Config config;
  Invocation inv;
  try {
    auto workspace = workspace_of(a.workspace);
    inv.workspace = workspace;
    x.policy = policy_of(a.policy, workspace);
    if (a.timeout) {
      auto d = parse_duration(*a.timeout);
      if (!d) throw Error(code::kBadArgument, "bad --timeout '" + *a.timeout + "'");
      if (auto longer = timeout_loosening(x.policy, *d, "--timeout")) throw *longer;
      x.policy.limits.timeout = d;
    }
    registry = make_registry(a.runtime, config);
    apply_config(inv, config, a.runtime);
  } catch (const ErrorList& e) {
    print_errors(e.errors());
    return 125;
  } catch (const Error& e) {
    print_errors({e});
    return 125;
  }
  x.requirements = derive_requirements(x.policy);
  x.request = DispatchRequest{x.requirements, a.backend, x.policy.backend.prefer, x.policy.name,
                              config.dispatch_order};
  x.decision = choose_backend(
      *registry, x.request, true, &x.candidates,
      [&](const std::string& name) { return backend_settings(x.policy, config.backends, name); });
  if (x.decision.chosen) {
    inv.policy = x.policy;
    inv.host_home = host_home();
    x.preview = preview_invocation(*registry, inv, *x.decision.chosen);
  }
  if (a.json)
    std::cout << boost::json::serialize(explanation_json(x)) << "\n";
  else
    print_explanation(x);
  print_diagnostics(*registry, std::cerr, x.decision.refusal);
  return x.decision.chosen ? 0 : 125;
}

}  // namespace

void register_explain(CLI::App& app) {
  auto args = std::make_shared<ExplainArgs>();
  auto* verb = app.add_subcommand(
      "explain", "show which backend would run a policy and why, without running anything");
  verb->add_option("--policy", args->policy, "policy file or preset name (default: standard)");
  verb->add_option("--backend", args->backend, "explain this backend only");
  verb->add_option("--workspace", args->workspace, "workspace for path expansion (default: .)");
  verb->add_option("--timeout", args->timeout, "shorten limits.timeout, as `cordon run` would");
  verb->add_flag("--json", args->json, "print one JSON object");
  add_runtime_options(verb, args->runtime);
  verb->callback([args] { set_exit_status(explain_main(*args)); });
}

}  // namespace cordon::cli
