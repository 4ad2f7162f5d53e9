// `cordon gc [--backend NAME]`: asks each backend (or the one named) to remove what runs of a
// killed cordon left behind (Backend::collect_garbage): the docker backend removes the containers
// labelled cordon.run whose creating process is gone. `cordon docker gc` is its alias for docker.
#include <cordon/runner.hpp>

#include <iostream>
#include <memory>

#include "runtime_options.hpp"
#include "verbs.hpp"

namespace cordon::cli {

namespace {

struct GcArgs {
  std::optional<std::string> backend, policy, socket;
  RuntimeOptions runtime;
};

// What one backend's collection did: printed as it goes; false when something may be left.
bool collect(Backend& backend, const std::string& name, const boost::json::object& settings,
             bool& removed_any) {
  GarbageReport report = backend.collect_garbage(settings);
  for (const auto& line : report.removed) std::cout << name << ": removed " << line << "\n";
  removed_any = removed_any || !report.removed.empty();
  if (!report.error) return true;
  std::cerr << report.error->render() << "\n";
  return false;
}

// The backends to collect for: the one named, else every one found that the operator allows.
std::vector<std::string> backends_of(Registry& registry, const GcArgs& a) {
  if (a.backend) {
    if (!registry.backend(*a.backend)) {
      const BackendEntry* entry = registry.find(*a.backend);
      if (entry && entry->error) throw *entry->error;
      throw Error(code::kUnknownBackend, "no backend named '" + *a.backend + "'",
                  "cordon backends lists what was found and why");
    }
    return {*a.backend};
  }
  registry.discover();
  std::vector<std::string> names;
  for (const auto* entry : registry.entries())
    if (!entry->error || entry->error->code() != std::string(code::kPluginNotAllowed))
      names.push_back(entry->name);
  return names;
}

int gc_main(const GcArgs& a) {
  Config config;
  auto registry = make_registry(a.runtime, config);
  Policy policy;
  if (a.policy) policy = policy_of(a.policy, workspace_of(std::nullopt));
  bool clean = true, removed_any = false;
  for (const auto& name : backends_of(*registry, a)) {
    Backend* backend = registry->backend(name);
    if (!backend) {
      const BackendEntry* entry = registry->find(name);
      if (entry && entry->error) std::cerr << entry->error->render() << "\n";
      clean = false;
      continue;
    }
    auto settings = backend_settings(policy, config.backends, name);
    if (a.socket) settings["socket"] = *a.socket;
    clean = collect(*backend, name, settings, removed_any) && clean;
  }
  if (!clean) return 125;
  if (!removed_any) std::cout << "nothing to remove\n";
  return 0;
}

CLI::App* add_gc(CLI::App& parent, const std::shared_ptr<GcArgs>& args, const std::string& what) {
  auto* gc = parent.add_subcommand("gc", what);
  gc->add_option("--policy", args->policy, "policy whose [backends.<name>] settings are used");
  add_runtime_options(gc, args->runtime);
  gc->callback([args] { run_verb(125, [&] { return gc_main(*args); }); });
  return gc;
}

}  // namespace

void register_gc(CLI::App& app) {
  auto args = std::make_shared<GcArgs>();
  auto* gc = add_gc(
      app, args, "remove what runs of a killed cordon left behind (every backend, or --backend)");
  gc->add_option("--backend", args->backend, "collect for this backend only");
}

void register_docker(CLI::App& app) {
  auto* group = app.add_subcommand("docker", "housekeeping of the docker backend");
  group->require_subcommand(1);
  auto args = std::make_shared<GcArgs>();
  args->backend = "docker";
  auto* gc = add_gc(*group, args,
                    "cordon gc --backend docker: remove containers left by a cordon that was "
                    "killed (label cordon.run)");
  gc->add_option("--socket", args->socket, "the daemon's socket (default: settings, DOCKER_HOST)");
}

}  // namespace cordon::cli
