// Running a command end to end: requirements, dispatch, settings, the plan, the run. The one
// entry point the CLI, background jobs and the agent server share.
#pragma once

#include <cordon/dispatch.hpp>
#include <cordon/registry.hpp>
#include <cordon/sdk/backend.hpp>
#include <cordon/sdk/export.hpp>
#include <cordon/sdk/policy.hpp>
#include <cordon/sdk/requirements.hpp>

#include <boost/json/object.hpp>

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cordon {

/// The baseline PATH of the granted environment.
inline constexpr const char* kBaselinePath = "/usr/local/bin:/usr/bin:/bin";

/// One command to run, with everything decided by the caller.
struct Invocation {
  Policy policy;                                  ///< resolved: presets, extends and paths applied
  std::vector<std::string> argv;                  ///< checked by the caller (see command.hpp)
  std::filesystem::path workspace;                ///< an existing directory, absolute
  std::optional<Duration> timeout;                ///< shortens limits.timeout; longer: CRD4007
  std::optional<std::string> backend;             ///< the backend named by the caller
  std::optional<std::string> stdin_data;          ///< nullopt: /dev/null
  std::map<std::string, std::string> caller_env;  ///< where env.pass takes values from
  std::filesystem::path host_home;                ///< the invoking user's home
  boost::json::object config_backends;            ///< [backends] of the configuration file
  std::vector<std::string> dispatch_order;        ///< [dispatch] order of the configuration
  bool shell_unsafe = false;        ///< argv is /bin/sh -c STRING by the caller's choice
  std::shared_ptr<StopToken> stop;  ///< lets another thread stop the run (background jobs)
  Requirements extra_requirements;  ///< asked for beyond the policy (a sandboxed shell)
  std::vector<std::string> notes;   ///< added to the result's notes (e.g. the shell mode)
  /// cordon's own state beyond the defaults that run_invocation() protects (see
  /// Plan::protected_paths): a job's state directory, an explicit --config file.
  std::vector<std::filesystem::path> protected_paths;
};

/// What happened to an invocation.
struct RunOutcome {
  RunResult result;                 ///< result.error is set when cordon refused or failed
  std::string backend;              ///< the backend that ran it; empty when none was chosen
  Requirements requirements;        ///< what the backend had to prove
  Decision decision;                ///< how the backend was chosen, or why none was
  std::filesystem::path workspace;  ///< the workspace as resolved (canonical); empty if refused
};

/// This process's environment as a map (the usual Invocation::caller_env).
CORDON_API std::map<std::string, std::string> caller_environment();

/// The granted environment, without HOME: PATH, LANG=C.UTF-8 and TZ=UTC as a baseline, then
/// env.pass names present in `caller`, then env.set. Pure.
CORDON_API std::map<std::string, std::string> granted_environment(
    const Policy& policy, const std::map<std::string, std::string>& caller);

/// Settings of backend `name`: the configuration's [backends.<name>] table, overridden key by
/// key by the policy's. Pure.
CORDON_API boost::json::object backend_settings(const Policy& policy,
                                                const boost::json::object& config_backends,
                                                const std::string& name);

/// The registry's view of one backend, as dispatch wants it (loads it and probes it for a run
/// with `settings`, its [backends.<name>] table). A remote backend is probed only with
/// `probe_remote` (it was named or preferred: see asked_for).
CORDON_API Candidate evaluate(Registry& registry, const std::string& name,
                              const boost::json::object& settings = {}, bool probe_remote = true);

/// The settings a run would give backend `name` (see backend_settings).
using SettingsOf = std::function<boost::json::object(const std::string& name)>;

/// Chooses a backend for `request`. Probes candidates in order and stops at the first that
/// proves everything, unless `probe_all` (for `cordon explain`). `seen` receives every
/// candidate evaluated. Each candidate is probed for the settings `settings_of` gives it (none
/// when it is empty): a backend whose settings choose its target proves that target.
CORDON_API Decision choose_backend(Registry& registry, const DispatchRequest& request,
                                   bool probe_all = false, std::vector<Candidate>* seen = nullptr,
                                   const SettingsOf& settings_of = {});

/// Dispatch for a run of `policy` (`cordon run`, `cordon job start`): each candidate is probed
/// for the settings the run would give it (backend_settings), and the chosen backend's settings
/// must validate, else the decision is a refusal with CRD2015. A backend named in `request` has
/// its settings checked before it is probed for them.
CORDON_API Decision choose_for_run(Registry& registry, const DispatchRequest& request,
                                   const Policy& policy,
                                   const boost::json::object& config_backends);

/// Derives the requirements, chooses the backend, validates its settings (CRD2015), builds the
/// plan and runs it, streaming output to `sink`. Never throws: every failure is in
/// outcome.result.error, and the CLI exit status is outcome.result.cli_status().
CORDON_API RunOutcome run_invocation(Registry& registry, const Invocation& invocation,
                                     OutputSink& sink);

/// What `backend` would decide for `invocation` before running it (Backend::preview), given
/// the plan a run would make: the same workspace resolution, settings and protected paths.
/// Empty when the backend is not loaded or the workspace does not resolve. Never throws.
CORDON_API RunPreview preview_invocation(Registry& registry, const Invocation& invocation,
                                         const std::string& backend);

/// What `backend` would run for `invocation` (Backend::compile), given the plan a run would make;
/// nullopt when it has nothing to show. Throws cordon::Error: CRD3010 for a backend that is not
/// there (or its load error), CRD4007 for a workspace that does not resolve, the backend's own.
CORDON_API std::optional<std::string> compile_invocation(Registry& registry,
                                                         const Invocation& invocation,
                                                         const std::string& backend);

}  // namespace cordon
