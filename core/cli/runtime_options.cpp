// Shared option handling of the runtime verbs.
#include "runtime_options.hpp"

#include <sys/stat.h>

#include <cordon/sdk/path_guard.hpp>
#include <cordon/sdk/state_roots.hpp>

#include <unistd.h>
#include <cordon/policy_loader.hpp>
#include <cordon/sdk/log.hpp>
#include <cordon/user_db.hpp>

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "../src/own_state.hpp"

namespace cordon::cli {

namespace fs = std::filesystem;

namespace {
std::vector<BuiltinBackend>& builtin_backends() {
  static std::vector<BuiltinBackend> list;
  return list;
}
}  // namespace

void set_builtin_backends(std::vector<BuiltinBackend> builtins) {
  builtin_backends() = std::move(builtins);
}

void add_runtime_options(CLI::App* verb, RuntimeOptions& options) {
  verb->add_option("--plugin-dir", options.plugin_dirs,
                   "search DIR for plugins first (repeatable; then CORDON_PLUGIN_PATH)");
  verb->add_option("--config", options.config,
                   "configuration file with [plugins] pins and [backends] settings "
                   "(default: $XDG_CONFIG_HOME/cordon/config.toml)");
}

std::unique_ptr<Registry> make_registry(const RuntimeOptions& options, Config& config) {
  std::optional<fs::path> explicit_file;
  if (options.config) explicit_file = *options.config;
  config = load_config(explicit_file);
  RegistryOptions ro;
  for (const auto& d : options.plugin_dirs) ro.plugin_dirs.emplace_back(d);
  ro.pins = config.pins;
  ro.builtins = builtin_backends();
  ro.logger = cordon::log::default_logger();
  ro.state_dir = default_backend_state_dir();
  return std::make_unique<Registry>(std::move(ro));
}

fs::path host_home() {
  if (auto home = env_dir("HOME"); !home.empty()) return home;
  if (auto user = find_user(::getuid()); user && !user->home.empty()) return user->home;
  return "/";
}

fs::path workspace_of(const std::optional<std::string>& given) {
  std::error_code ec;
  fs::path ws = given ? fs::absolute(*given, ec) : fs::current_path(ec);
  if (ec)
    throw Error(code::kBadArgument,
                "workspace '" + (given ? *given : ws.string()) + "' is not an existing directory",
                "pass an existing directory to --workspace");
  // Resolved without following a planted link: '{workspace}' expands to what the command gets.
  return resolve_workspace(ws.lexically_normal().string()).path;
}

Policy policy_of(const std::optional<std::string>& file, const fs::path& workspace) {
  // One rule wherever a policy is named: a path or a file name with an extension, else a preset.
  Policy policy = load_policy(file.value_or("standard"));
  return resolve_paths(std::move(policy), PathContext{workspace, host_home()});
}

std::string as_warning(const Error& e) { return "warning" + e.render().substr(5); }

void print_errors(const std::vector<Error>& errors) {
  for (const auto& e : errors) std::cerr << e.render() << "\n";
}

void print_diagnostics(const Registry& registry, std::ostream& out,
                       const std::optional<Error>& except) {
  for (const auto& d : registry.diagnostics()) {
    if (except && except->code() == d.error.code() && except->message() == d.error.message())
      continue;
    out << (d.level == Diagnostic::Level::warning ? as_warning(d.error) : d.error.render()) << "\n";
  }
}

void apply_config(Invocation& inv, const Config& config, const RuntimeOptions& options) {
  inv.config_backends = config.backends;
  inv.dispatch_order = config.dispatch_order;
  if (options.config) inv.protected_paths.push_back(std::filesystem::absolute(*options.config));
}

WorkspaceRules workspace_rules(const Policy& p) {
  WorkspaceRules r;
  if (p.limits.max_file_size_mb) {
    r.max_write_bytes = *p.limits.max_file_size_mb * 1024 * 1024;
    r.max_read_bytes = r.max_write_bytes;
  }
  for (const auto& b : p.filesystem.blocked) r.blocked.emplace_back(b);
  // The policy's own files, as in every run: the file API cannot rewrite them either.
  for (const auto& f : p.files) r.blocked.emplace_back(f);
  return r;
}

namespace {

// Adds where each of `paths` leads when that differs from its name: a blocked symlink blocks
// its target, as in a run, and ~/.config -> ~/dots/config puts cordon's state inside a workspace
// ~/dots by a name the workspace's own paths never spell.
void add_link_targets(std::vector<fs::path>& paths) {
  for (std::size_t i = 0, given = paths.size(); i < given; ++i) {
    std::error_code ec;
    fs::path real = fs::weakly_canonical(paths[i], ec);
    if (!ec && real != paths[i].lexically_normal() &&
        std::find(paths.begin(), paths.end(), real) == paths.end())
      paths.push_back(std::move(real));
  }
}

}  // namespace

WorkspaceRules local_workspace_rules(const Policy& policy, const Registry& registry,
                                     const RuntimeOptions& options, const fs::path& workspace,
                                     std::vector<fs::path> extra) {
  WorkspaceRules r = workspace_rules(policy);
  add_link_targets(r.blocked);
  if (options.config) extra.push_back(fs::absolute(*options.config));
  if (::geteuid() == 0) {
    // Root's file API acts for the workspace's owner, and writes as itself in a workspace of
    // its own such as /home: each of those users' later cordon trusts its state.
    struct stat st {};
    if (::stat(workspace.c_str(), &st) == 0)
      for (auto& dir : command_user_state(st.st_uid)) extra.push_back(std::move(dir));
    for (auto& dir : users_state_within(workspace)) extra.push_back(std::move(dir));
  }
  std::vector<std::string> notes;  // a state root that cannot be made is blocked all the same
  r.own_state = detail::own_state_paths(registry, policy, extra, notes);
  add_link_targets(r.own_state);
  return r;
}

}  // namespace cordon::cli
