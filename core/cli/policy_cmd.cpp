// `cordon policy check|show|requirements|schema`: explain a policy without running anything.
#include <cordon/policy_io.hpp>
#include <cordon/policy_loader.hpp>
#include <cordon/sdk/requirements.hpp>

#include <boost/json.hpp>

#include <iostream>

#include "runtime_options.hpp"
#include "verbs.hpp"

namespace cordon::cli {

namespace {

// Exit status of `policy` verbs when a policy is invalid.
constexpr int kInvalidPolicy = 2;

int check(const std::vector<std::string>& files) {
  int status = 0;
  for (const auto& f : files) {
    try {
      auto warnings = policy_warnings(load_policy(f));
      for (const auto& w : warnings) std::cerr << as_warning(w) << "\n";
      std::cout << f << ": ok";
      if (!warnings.empty())
        std::cout << " (" << warnings.size() << " warning" << (warnings.size() == 1 ? "" : "s")
                  << ")";
      std::cout << "\n";
    } catch (const ErrorList& e) {
      print_errors(e.errors());
      std::cerr << f << ": " << e.errors().size() << " error" << (e.errors().size() == 1 ? "" : "s")
                << "\n";
      status = kInvalidPolicy;
    }
  }
  return status;
}

int show(const std::string& file, const std::string& format) {
  Policy p = load_policy(file);
  if (format == "toml")
    std::cout << to_toml(p);
  else if (format == "yaml")
    std::cout << to_yaml(p);
  else
    std::cout << to_json(p) << "\n";
  return 0;
}

// Advisory clauses are listed after the capabilities, with none: nothing has to prove them.
int requirements(const std::string& file, bool json) {
  Policy policy = load_policy(file);
  auto reqs = derive_requirements(policy);
  auto advisory = advisory_clauses(policy);
  if (json) {
    boost::json::array out;
    for (const auto& r : reqs) out.push_back({{"capability", r.id}, {"clause", r.clause}});
    for (const auto& a : advisory)
      out.push_back({{"capability", nullptr}, {"clause", a.clause}, {"advisory", a.why}});
    std::cout << boost::json::serialize(out) << "\n";
    return 0;
  }
  for (const auto& r : reqs) std::cout << r.id << "\t" << r.clause << "\n";
  for (const auto& a : advisory)
    std::cout << "(none: advisory)\t" << a.clause << ": " << a.why << "\n";
  return 0;
}

}  // namespace

void register_policy(CLI::App& app) {
  auto* policy = app.add_subcommand("policy", "check, show and explain policy files");
  policy->require_subcommand(1);

  auto* c = policy->add_subcommand("check", "validate policy files, reporting every problem");
  auto files = std::make_shared<std::vector<std::string>>();
  c->add_option("FILE", *files, "policy files (.toml, .yaml, .yml) or preset names")->required();
  c->callback([files] { run_verb(kInvalidPolicy, [&] { return check(*files); }); });

  auto* s = policy->add_subcommand("show", "print the effective policy after presets and extends");
  auto show_file = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("toml");
  s->add_option("FILE", *show_file, "policy file or preset name")->required();
  s->add_option("--format", *format, "toml, yaml or json")
      ->check(CLI::IsMember({"toml", "yaml", "json"}));
  s->callback(
      [show_file, format] { run_verb(kInvalidPolicy, [&] { return show(*show_file, *format); }); });

  auto* r = policy->add_subcommand("requirements", "list the capabilities a policy needs proven");
  auto req_file = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  r->add_option("FILE", *req_file, "policy file or preset name")->required();
  r->add_flag("--json", *json, "print JSON");
  r->callback([req_file, json] {
    run_verb(kInvalidPolicy, [&] { return requirements(*req_file, *json); });
  });

  auto* schema = policy->add_subcommand("schema", "print the JSON Schema of the policy format");
  schema->callback([] { std::cout << policy_json_schema(); });
  add_policy_compile(policy);
}

}  // namespace cordon::cli
