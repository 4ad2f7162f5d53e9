// `cordon docker gc`: removes the containers of cordon runs whose cordon was killed (labelled
// cordon.run, their creating process gone), through the docker backend's collect_garbage().
#include <cordon/runner.hpp>

#include <iostream>
#include <memory>

#include "runtime_options.hpp"
#include "verbs.hpp"

namespace cordon::cli {

namespace {

struct GcArgs {
  std::optional<std::string> policy, socket;
  RuntimeOptions runtime;
};

int gc_main(const GcArgs& a) {
  Config config;
  auto registry = make_registry(a.runtime, config);
  Backend* docker = registry->backend("docker");
  if (!docker)
    throw Error(code::kUnknownBackend, "the docker backend is not installed or failed to load",
                "cordon backends lists what was found and why");
  Policy policy;
  if (a.policy) policy = policy_of(a.policy, workspace_of(std::nullopt));
  auto settings = backend_settings(policy, config.backends, "docker");
  if (a.socket) settings["socket"] = *a.socket;
  GarbageReport report = docker->collect_garbage(settings);
  for (const auto& line : report.removed) std::cout << "removed " << line << "\n";
  if (report.error) throw *report.error;
  if (report.removed.empty()) std::cout << "nothing to remove\n";
  return 0;
}

}  // namespace

void register_docker(CLI::App& app) {
  auto* group = app.add_subcommand("docker", "housekeeping of the docker backend");
  group->require_subcommand(1);
  auto args = std::make_shared<GcArgs>();
  auto* gc = group->add_subcommand(
      "gc", "remove containers left by a cordon that was killed (label cordon.run)");
  gc->add_option("--policy", args->policy, "policy whose [backends.docker] names the daemon");
  gc->add_option("--socket", args->socket, "the daemon's socket (default: settings, DOCKER_HOST)");
  add_runtime_options(gc, args->runtime);
  gc->callback([args] { run_verb(125, [&] { return gc_main(*args); }); });
}

}  // namespace cordon::cli
