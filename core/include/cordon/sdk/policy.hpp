// The policy model: one plain value type for every section of the policy format (README,
// "Policies"). Defaults are defined here and nowhere else.
#pragma once

#include <cordon/sdk/error.hpp>
#include <cordon/sdk/export.hpp>

#include <boost/json/object.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cordon {

using Duration = std::chrono::milliseconds;

/// How a command string may reach a shell (process.shell).
enum class ShellMode { off, sandboxed, unsafe };

/// Whether HOME is a private empty directory or the host's own (filesystem.home).
enum class HomeMode { private_home, host };

/// [limits]. An unset optional means "no limit asked for", so no requirement is derived.
struct Limits {
  std::optional<std::uint64_t> memory_mb;
  std::optional<std::uint64_t> max_processes;
  std::optional<std::uint64_t> max_open_files;
  std::optional<std::uint64_t> cpu_seconds;
  std::optional<std::uint64_t> cpu_percent;
  std::optional<Duration> timeout;
  std::uint64_t max_output_bytes = 1024 * 1024;  ///< per stream; over it head and tail are kept
  std::optional<std::uint64_t> max_file_size_mb;
  std::optional<Duration> job_lifetime;  ///< background jobs only; none = until stopped
  std::uint64_t max_log_bytes = 64ull * 1024 * 1024;
  bool operator==(const Limits&) const = default;
};

/// [filesystem]. Paths are as written until resolve_paths() expands them.
struct Filesystem {
  bool read_host = false;  ///< read = "host": everything not blocked is readable
  std::vector<std::string> read = {"/usr", "/lib", "/lib64", "/bin", "/sbin", "/etc"};
  std::vector<std::string> write = {"{workspace}"};
  bool write_host = false;  ///< write = "host": no write confinement asked for
  std::vector<std::string> blocked;
  HomeMode home = HomeMode::private_home;
  /// Set by resolve_paths(): each entry of read, write or blocked written as a `~` path, by the
  /// path it expanded to -> what followed the `~` ("" or "/.ssh"). A backend that runs the
  /// command as another user than cordon's applies them to that user's home as well
  /// (for_command_home()); the effective policy is written out with them as `~` paths again.
  std::map<std::string, std::string> from_home;
  bool operator==(const Filesystem&) const = default;
};

/// [network]. Denied unless allow = true; port lists open single TCP ports while denied.
struct Network {
  bool allow = false;
  std::vector<std::uint16_t> connect_ports;
  std::vector<std::uint16_t> bind_ports;
  bool operator==(const Network&) const = default;
};

/// [process].
struct Process {
  ShellMode shell = ShellMode::off;
  std::vector<std::string> blocked_commands;
  std::vector<std::string> allowed_commands;  ///< non-empty: nothing else may be executed
  bool allow_subprocess = true;
  /// Python modules the command should not import. Advisory: no kernel can stop an import, so
  /// it asks no capability; `cordon scan --policy` reports such imports, and a run notes it.
  std::vector<std::string> blocked_imports;
  bool operator==(const Process&) const = default;
};

/// [env]. The environment is granted, never inherited.
struct Env {
  std::map<std::string, std::string> set;
  std::vector<std::string> pass;
  bool operator==(const Env&) const = default;
};

/// [backend].
struct BackendChoice {
  std::vector<std::string> prefer;
  bool operator==(const BackendChoice&) const = default;
};

/// A whole policy. `origins` maps a dotted key ("limits.memory_mb") to where its value was
/// written, after presets and `extends` were applied.
struct CORDON_API Policy {
  int version = 1;
  std::string name;
  std::optional<std::string> extends;
  Limits limits;
  Filesystem filesystem;
  Network network;
  Process process;
  Env env;
  BackendChoice backend;
  boost::json::object backends;  ///< [backends.<name>] settings, validated by each plugin
  std::map<std::string, Location> origins;
  std::vector<std::string> sources;  ///< files (or "preset:NAME") that made this policy, base first
  /// The policy files among `sources`: each where it leads (canonical) and, when that differs,
  /// as it was named (absolute: a symlink there could be swapped). Every run under this policy
  /// is kept from them (protected paths), so no command can rewrite what governs later runs.
  std::vector<std::string> files;

  /// Equality of the policy itself, ignoring where values came from.
  bool same_rules(const Policy& other) const;
};

/// Names of the shipped presets, in documentation order.
CORDON_API const std::vector<std::string>& preset_names();

/// The text of an embedded preset (TOML), or nullopt for an unknown name.
CORDON_API std::optional<std::string> preset_text(const std::string& name);

/// "off" / "sandboxed" / "unsafe" and their aliases; nullopt for anything else.
CORDON_API std::optional<ShellMode> parse_shell_mode(const std::string& text);
CORDON_API const char* to_string(ShellMode mode);
CORDON_API const char* to_string(HomeMode mode);

/// "250ms", "90s", "5m", "1h" or a plain integer of seconds; nullopt when malformed or <= 0.
CORDON_API std::optional<Duration> parse_duration(const std::string& text);
/// The shortest exact rendering of a duration ("90s", "5m", "250ms").
CORDON_API std::string format_duration(Duration d);

/// A caller's timeout (a request's, `--timeout`, Invocation::timeout) tightens the policy's
/// limits.timeout, never loosens it: the error (`code`, naming `source`) that refuses `asked`
/// when it is longer than the policy's, else nullopt (also when the policy sets none). Pure.
CORDON_API std::optional<Error> timeout_loosening(const Policy& policy, Duration asked,
                                                  const std::string& source,
                                                  const char* code = code::kBadArgument);
/// True when `filesystem.write` lets the command write `dir` (absolute, canonical, such as the
/// workspace): `write = "host"`, or a grant that is `dir` or one of its ancestors, compared
/// lexically once normalised. A backend makes the workspace writable only then: a policy without
/// `{workspace}` in its write grants gets a read-only workspace, never a silently writable one.
/// Pure.
CORDON_API bool grants_write(const Policy& policy, const std::filesystem::path& dir);

/// The same rule for a background job, whose deadline is its lifetime: a caller's timeout
/// (JobSpec::timeout, `job start --timeout`, a job request's) may only shorten
/// limits.job_lifetime. Pure.
CORDON_API std::optional<Error> job_timeout_loosening(const Policy& policy, Duration asked,
                                                      const std::string& source,
                                                      const char* code = code::kBadRequest);

}  // namespace cordon
