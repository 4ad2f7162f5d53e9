// The backend SDK: the class every sandbox backend derives from.
//
// A backend proves what it can enforce (probe) and runs a plan under it (run). The public
// methods are non-virtual: they validate, time, log and catch, then call the protected hooks.
// Hooks are noexcept and report failure through their return value.
#pragma once

#include <cordon/error.hpp>
#include <cordon/export.hpp>
#include <cordon/policy.hpp>
#include <cordon/requirements.hpp>
#include <cordon/result.hpp>

#include <boost/json/object.hpp>

#include <chrono>
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
  std::filesystem::path host_home;        ///< the invoking user's home
  boost::json::object settings;           ///< this backend's [backends.<name>] table
  bool shell_unsafe = false;              ///< argv is /bin/sh -c STRING by the caller's choice
};

/// Passed to a backend when it is created: its name, the core's logger, and where it may keep
/// state. Plugins log through this logger and never touch spdlog's global registry.
struct BackendContext {
  std::string name;
  std::shared_ptr<spdlog::logger> logger;
  std::filesystem::path state_dir;
};

/// Base class of every backend.
class CORDON_API Backend {
 public:
  virtual ~Backend();
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  const std::string& name() const noexcept { return context_.name; }

  /// Probes once and caches the answer for the life of this object.
  const ProbeResult& probe();

  /// Checks `settings` (the [backends.<name>] table); errors name the key path (CRD2015).
  std::vector<Error> validate_settings(const boost::json::object& settings);

  /// Runs the plan. Output reaches `sink` with head-and-tail truncation at the policy's
  /// max_output_bytes per stream. Never throws: failures are in RunResult::error.
  RunResult run(const Plan& plan, OutputSink& sink);

 protected:
  explicit Backend(BackendContext context);

  /// Proves capabilities by doing, not by guessing.
  virtual ProbeResult do_probe() noexcept = 0;
  /// Runs the command; when it returns, no process of the command may be alive.
  virtual RunResult do_run(const Plan& plan, OutputSink& sink) noexcept = 0;
  /// Default: accepts an empty table and refuses any key.
  virtual std::vector<Error> do_validate_settings(const boost::json::object& settings) noexcept;

  const BackendContext& context() const noexcept { return context_; }
  spdlog::logger& log() const noexcept { return *context_.logger; }

 private:
  BackendContext context_;
  std::once_flag probed_;
  ProbeResult probe_result_;
};

}  // namespace cordon
