// The backend SDK: the class every sandbox backend derives from.
//
// A backend proves what it can enforce (probe) and runs a plan under it (run). The public
// methods are non-virtual: they validate, time, log and catch, then call the protected hooks.
//
// The error convention: a hook reports a failure by throwing cordon::Error (or ErrorList), or
// through its return value. The base turns a thrown Error into the result's error with the
// Error's own code and hint: a run's RunResult::error, a probe's ProbeResult::unusable, a
// settings error, a garbage report's error, a preview's warning. Anything else a hook throws is
// a bug of the plugin and is reported under a generic code (CRD3006 for a probe, CRD5003 for a
// run or a collection, CRD2015 for settings) instead of terminating cordon. So a plugin needs
// no try/catch of its own around a hook.
#pragma once

#include <cordon/sdk/error.hpp>
#include <cordon/sdk/export.hpp>
#include <cordon/sdk/policy.hpp>
#include <cordon/sdk/requirements.hpp>
#include <cordon/sdk/result.hpp>
#include <cordon/sdk/stop_token.hpp>
#include <cordon/sdk/workspace_files.hpp>

#include <boost/json/object.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spdlog {
class logger;
}

namespace cordon {

/// One capability answered by a probe, with a line of evidence either way.
struct Proof {
  std::string capability;
  bool proven = false;
  std::string evidence;  ///< "Landlock ABI 7", "no sandbox-exec: not macOS"
  bool operator==(const Proof&) const = default;
};

/// What a backend can enforce here and now.
struct CORDON_API ProbeResult {
  bool available = false;  ///< false: the backend cannot run anything here (reason says why)
  std::string reason;
  std::vector<Proof> proofs;
  std::vector<std::string> facts;  ///< other evidence worth showing ("limits via cgroup v2")
  /// Set by Backend::probe() when the hook threw (CRD3006); the result is then unavailable.
  std::optional<Error> fault;
  /// Optional, with `available` false: the refusal in the backend's own words (its code and
  /// hint, e.g. CRD1005 for a daemon that did not answer). Without it a run is refused with
  /// CRD1004 and `reason`.
  std::optional<Error> unusable;

  /// True when the capability is listed and proven (an unknown id is not proven).
  bool proves(std::string_view capability) const;
  /// The evidence line for a capability, or "not known to this backend".
  std::string evidence(std::string_view capability) const;
};

/// Which output stream a chunk belongs to.
enum class Stream { out, err };

/// Receives the command's output as it arrives. Called from the thread that calls run().
class CORDON_API OutputSink {
 public:
  virtual ~OutputSink();
  virtual void write(Stream stream, std::string_view chunk) = 0;
};

/// Everything a backend needs to run one command.
struct Plan {
  Policy policy;                          ///< resolved: presets, extends and paths applied
  Requirements requirements;              ///< derived from `policy`; all proven by the probe
  std::vector<std::string> argv;          ///< argv[0] is the program; never a shell unless asked
  std::filesystem::path workspace;        ///< absolute; the command's working directory
  std::optional<std::string> stdin_data;  ///< nullopt: stdin is /dev/null
  std::optional<std::chrono::steady_clock::time_point> deadline;
  /// The granted environment without HOME (the backend points HOME at a private directory,
  /// or at `host_home` when policy.filesystem.home = host).
  std::map<std::string, std::string> env;
  std::filesystem::path host_home;  ///< the invoking user's home
  boost::json::object settings;     ///< this backend's [backends.<name>] table
  bool shell_unsafe = false;        ///< argv is /bin/sh -c STRING by the caller's choice
  /// cordon's own state: the job and backend state directories, the configuration, the
  /// plugin directories and the policy's own files (absolute, lexically normal; some may not
  /// exist). Whatever the policy grants, a backend keeps every one of them out of the command's
  /// reach (neither readable nor writable), or refuses the run: nothing a sandbox writes may steer
  /// a later run.
  std::vector<std::filesystem::path> protected_paths;
  /// When set, the backend watches it (its wake_fd(), or requested() at least every 100 ms)
  /// and stops the command as asked: terminate sends SIGTERM to every process of the command,
  /// kill ends them all at once. A request made before the command starts is not lost.
  std::shared_ptr<StopToken> stop;
};

/// What Backend::collect_garbage() removed: one line per thing, or the error that stopped it.
struct GarbageReport {
  std::vector<std::string> removed;  ///< "container 3f2a… of run 9c1e… (cordon pid 4242 is gone)"
  std::optional<Error> error;
};

/// Where a backend runs the command. A local backend (this machine) is a candidate of the
/// configured default order ([dispatch] order); a remote one (another machine, a hosted
/// sandbox) is chosen only when named (--backend) or preferred (the policy's backend.prefer).
enum class Locality : std::uint32_t { local = 0, remote = 1 };

/// Passed to a backend when it is created: its name, the core's logger, and where it may keep
/// state. Plugins log through this logger and never touch spdlog's global registry.
struct BackendContext {
  std::string name;
  std::shared_ptr<spdlog::logger> logger;
  std::filesystem::path state_dir;
};

/// The requirements `probe` does not prove, one line each ("\n  id (clause): evidence"); empty
/// when it proves them all. Backend::run refuses with them; a backend that checks another
/// target's probe (docker: the daemon a run's settings name) words its refusal the same way.
CORDON_API std::string unproven_lines(const Requirements& reqs, const ProbeResult& probe);

/// What a run would decide before it starts (Backend::preview), one line each.
struct RunPreview {
  /// Who the command runs as and why, where each `~` path of the policy lands for it.
  std::vector<std::string> facts;
  /// What the run would find wrong (landlock: a workspace the command's user cannot write),
  /// worded as the run's notes word it.
  std::vector<std::string> warnings;
};

/// Base class of every backend.
class CORDON_API Backend {
 public:
  virtual ~Backend();
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  const std::string& name() const noexcept { return context_.name; }

  /// Probes once and caches the answer for the life of this object. Never throws: a hook that
  /// throws yields an unavailable result with `fault` set (CRD3006).
  const ProbeResult& probe();

  /// The probe that answers for a run with `settings` (its [backends.<name>] table): probe()'s,
  /// unless the settings choose what the backend runs on (docker: the daemon `socket` or `host`
  /// names), when the backend proves that target instead. Settings that do not validate get
  /// probe()'s answer: the run is refused for them anyway (CRD2015). Dispatch and run() use
  /// this. Never throws.
  ProbeResult probe_for(const boost::json::object& settings);

  /// Checks `settings` (the [backends.<name>] table); errors name the key path (CRD2015).
  /// The answer for the last settings checked is kept, so dispatch, the runner and run() ask
  /// the plugin once per run. Never throws.
  std::vector<Error> validate_settings(const boost::json::object& settings);

  /// validate_settings() as one CRD2015 error naming every mistake (the first one's hint), or
  /// nullopt when the settings are valid. Never throws.
  std::optional<Error> settings_error(const boost::json::object& settings);

  /// Runs the plan. Output reaches `sink` with head-and-tail truncation at the policy's
  /// max_output_bytes per stream. Refuses settings that do not validate (CRD2015, every mistake
  /// named), and refuses (CRD1001 / CRD1004, or the probe's `unusable`) when the probe for the
  /// plan's settings does not prove every requirement of the plan. Never throws: failures are in
  /// RunResult::error.
  RunResult run(const Plan& plan, OutputSink& sink);

  /// Removes what runs of a cordon that was killed left behind (containers, remote
  /// directories), using `settings` (the [backends.<name>] table) to find it. Never throws.
  GarbageReport collect_garbage(const boost::json::object& settings);

  /// What a run of `plan` would decide, and find wrong, before it starts — without starting
  /// anything. For `cordon explain`; a run notes the same things. Never throws: a failure is a
  /// warning.
  RunPreview preview(const Plan& plan);

  /// What this backend would run for `plan`, as text an operator can review before trusting it
  /// (seatbelt: the SBPL profile and its parameters); nullopt when it has nothing to show.
  /// For `cordon policy compile`. Throws cordon::Error when the plan cannot be compiled.
  std::optional<std::string> compile(const Plan& plan);

  /// The workspace file API where this backend's commands run, at `root` (absolute; empty: the
  /// workspace the settings name), with `rules`. nullptr when that is this machine's file
  /// system: cordon::Workspace then applies. Throws cordon::Error (CRD2015 for settings that do
  /// not validate, CRD4004 for a root that is not a directory, the backend's own codes for a
  /// target it cannot reach).
  std::unique_ptr<WorkspaceFiles> open_workspace(const boost::json::object& settings,
                                                 const std::filesystem::path& root,
                                                 const WorkspaceRules& rules);

 protected:
  explicit Backend(BackendContext context);

  /// Proves capabilities by doing, not by guessing. May throw cordon::Error: the backend is then
  /// unavailable, refused in the Error's own words (ProbeResult::unusable).
  virtual ProbeResult do_probe() = 0;
  /// Runs the command; when it returns (or throws), no process of the command may be alive.
  /// Called only with settings that validate and when the probe for them (probe_for) proved
  /// every requirement of the plan. May throw cordon::Error: it becomes RunResult::error (the
  /// notes gathered so far are lost; return a result with `error` set to keep them).
  virtual RunResult do_run(const Plan& plan, OutputSink& sink) = 0;
  /// Default: probe(). Override when settings choose the target the backend runs on; called
  /// only with settings that validate. May throw cordon::Error, as do_probe.
  virtual ProbeResult do_probe_for(const boost::json::object& settings);
  /// Default: accepts an empty table and refuses any key. Returns every mistake (CRD2015); may
  /// throw cordon::Error or ErrorList instead.
  virtual std::vector<Error> do_validate_settings(const boost::json::object& settings);
  /// Default: nothing to collect. May throw cordon::Error: it becomes the report's error.
  virtual GarbageReport do_collect_garbage(const boost::json::object& settings);
  /// Default: nothing to say. May throw cordon::Error: its message becomes a warning.
  virtual RunPreview do_preview(const Plan& plan);
  /// Default: nullopt. May throw cordon::Error.
  virtual std::optional<std::string> do_compile(const Plan& plan);
  /// Default: nullptr (the commands see this machine's files). Called only with settings that
  /// validate. May throw cordon::Error.
  virtual std::unique_ptr<WorkspaceFiles> do_open_workspace(const boost::json::object& settings,
                                                            const std::filesystem::path& root,
                                                            const WorkspaceRules& rules);

  const BackendContext& context() const noexcept { return context_; }
  spdlog::logger& log() const noexcept { return *context_.logger; }

 private:
  ProbeResult guarded_probe();
  ProbeResult guarded_probe_for(const boost::json::object* settings);
  ProbeResult fault_result(const std::string& what);
  RunResult guarded_run(const Plan& plan, OutputSink& sink);

  BackendContext context_;
  std::once_flag probed_;
  ProbeResult probe_result_;
  std::mutex validated_mutex_;
  std::optional<boost::json::object> validated_settings_;  ///< the last settings checked
  std::vector<Error> validated_errors_;                    ///< and what was wrong with them
};

}  // namespace cordon
