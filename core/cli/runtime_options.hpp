// Options and helpers the runtime verbs (run, backends, explain) share.
#pragma once

#include <CLI/CLI.hpp>
#include <cordon/config.hpp>
#include <cordon/registry.hpp>
#include <cordon/runner.hpp>
#include <cordon/sdk/error.hpp>
#include <cordon/sdk/policy.hpp>
#include <cordon/sdk/workspace_files.hpp>

#include <filesystem>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "verbs.hpp"

namespace cordon::cli {

/// --plugin-dir DIR (repeatable) and --config FILE.
struct RuntimeOptions {
  std::vector<std::string> plugin_dirs;
  std::optional<std::string> config;
};

/// Adds --plugin-dir and --config to `verb`.
void add_runtime_options(CLI::App* verb, RuntimeOptions& options);

/// Backends the executable has built in, offered by every registry make_registry makes (the
/// front end's landlock; none in the full executable).
void set_builtin_backends(std::vector<BuiltinBackend> builtins);

/// The configuration (--config, else the default file) and a registry using its pins and
/// the --plugin-dir directories. Throws ErrorList for a bad configuration.
std::unique_ptr<Registry> make_registry(const RuntimeOptions& options, Config& config);

/// Gives `inv` what the configuration says of every run: the backends' settings, the dispatch
/// order, and the configuration file (--config) as cordon's own state, out of the command's
/// reach.
void apply_config(Invocation& inv, const Config& config, const RuntimeOptions& options);

/// The invoking user's home directory.
std::filesystem::path host_home();

/// The workspace: --workspace made absolute, or the current directory. Throws Error CRD4007
/// when it is not an existing directory.
std::filesystem::path workspace_of(const std::optional<std::string>& given);

/// --policy FILE|PRESET (see load_policy), or the `standard` preset, with paths resolved for
/// `workspace`. Every verb and the JSON request name their policy through it. Throws ErrorList.
Policy policy_of(const std::optional<std::string>& file, const std::filesystem::path& workspace);

/// The workspace file API's rules under `policy`: its blocked paths, and its file-size limit as
/// the read and write caps. For a workspace on another machine (ssh, e2b).
WorkspaceRules workspace_rules(const Policy& policy);

/// The rules of a workspace on this machine: workspace_rules() and, blocked as in every run,
/// cordon's own state (the job and backend state, the configuration, every plugin directory of
/// `registry`, the --config file of `options`) and the `extra` paths. A file written there
/// through the file API would steer a later cordon as a sandbox's write would. As root, the
/// default state of `workspace`'s owner too: root's file API acts there for that user, whose
/// later cordon trusts it (command_user_state()).
WorkspaceRules local_workspace_rules(const Policy& policy, const Registry& registry,
                                     const RuntimeOptions& options,
                                     const std::filesystem::path& workspace,
                                     std::vector<std::filesystem::path> extra = {});

/// The rendering of `e` as "warning[CODE]: ...".
std::string as_warning(const Error& e);

/// Prints each error as "error[CODE]: ..." on stderr.
void print_errors(const std::vector<Error>& errors);

/// Runs a verb's body and sets cordon's exit status to what it returns; an Error or ErrorList
/// is printed once and gives `error_status` instead.
template <class F>
void run_verb(int error_status, F&& body) {
  try {
    set_exit_status(body());
  } catch (const ErrorList& e) {
    print_errors(e.errors());
    set_exit_status(error_status);
  } catch (const Error& e) {
    print_errors({e});
    set_exit_status(error_status);
  }
}

/// Prints the registry's diagnostics as "warning[CODE]: ..." / "error[CODE]: ..." lines, except
/// one equal to `except` (already printed as the run's own error).
void print_diagnostics(const Registry& registry, std::ostream& out,
                       const std::optional<Error>& except = std::nullopt);

}  // namespace cordon::cli
