// `cordon policy compile --backend NAME FILE`: what a backend would run for a policy, printed
// for an operator to review before trusting it (seatbelt: the SBPL profile and its parameters).
#include <cordon/runner.hpp>

#include <iostream>
#include <memory>

#include "runtime_options.hpp"
#include "verbs.hpp"

namespace cordon::cli {

namespace {

struct CompileArgs {
  std::string policy;
  std::string backend;
  std::optional<std::string> workspace;
  RuntimeOptions runtime;
};

int compile_main(const CompileArgs& a) {
  Config config;
  auto registry = make_registry(a.runtime, config);
  Invocation inv;
  inv.workspace = workspace_of(a.workspace);
  inv.policy = policy_of(a.policy, inv.workspace);
  apply_config(inv, config, a.runtime);
  inv.host_home = host_home();
  inv.caller_env = caller_environment();
  auto text = compile_invocation(*registry, inv, a.backend);
  if (!text)
    throw Error(code::kBadArgument, "backend '" + a.backend + "' has nothing to compile",
                "cordon explain --backend " + a.backend + " says how it would run the policy");
  std::cout << *text;
  return 0;
}

}  // namespace

void add_policy_compile(CLI::App* policy) {
  auto a = std::make_shared<CompileArgs>();
  auto* c = policy->add_subcommand(
      "compile", "print what a backend would run for a policy (seatbelt: its SBPL profile)");
  c->add_option("FILE", a->policy, "policy file or preset name")->required();
  c->add_option("--backend", a->backend, "the backend to compile for")->required();
  c->add_option("--workspace", a->workspace, "the workspace the run would have (default: .)");
  add_runtime_options(c, a->runtime);
  c->callback([a] { run_verb(2, [&] { return compile_main(*a); }); });
}

}  // namespace cordon::cli
