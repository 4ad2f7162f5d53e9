// What a run produces: exit status, timing, truncation and the enforcement report.
#pragma once

#include <cordon/sdk/error.hpp>
#include <cordon/sdk/export.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cordon {

/// How one requirement was enforced in this run ("net.deny" -> "network namespace with no
/// interfaces but loopback").
struct Enforcement {
  std::string capability;
  std::string mechanism;
  bool operator==(const Enforcement&) const = default;
};

/// The outcome of Backend::run.
struct CORDON_API RunResult {
  int exit_code = -1;      ///< the command's exit status, or -1 when it did not exit
  int signal = 0;          ///< the signal that killed it, or 0
  bool timed_out = false;  ///< the deadline passed and the tree was killed
  bool stdout_truncated = false;
  bool stderr_truncated = false;
  std::uint64_t stdout_bytes = 0;  ///< bytes the command wrote, before truncation
  std::uint64_t stderr_bytes = 0;
  std::chrono::milliseconds duration{0};
  /// What the run used, where the backend can measure it; unset where it cannot (never 0 for
  /// "unknown"). `cordon run --json` shows the measured ones under "resources".
  std::optional<std::uint64_t> peak_memory_bytes;  ///< the whole sandbox's high-water mark
  std::optional<double> cpu_seconds;               ///< user + system time of the sandbox
  std::optional<double> cpu_user_seconds;
  std::optional<double> cpu_system_seconds;
  std::optional<std::uint64_t> processes_started;  ///< every process the sandbox started
  std::vector<Enforcement> report;
  std::vector<std::string> notes;  ///< e.g. "shell = unsafe: the command ran under /bin/sh"
  /// Set when cordon (not the command) failed: isolation could not be established (CRD1xxx),
  /// a backend fault (CRD5003), program not found / not executable (CRD5004 / CRD5005).
  std::optional<Error> error;

  /// The status cordon's CLI exits with: the command's own; 124 timed out; 125 cordon failed
  /// before exec; 126 not executable; 127 not found; 128+n killed by signal n.
  int cli_status() const;
};

/// The note of a run the memory limit killed something in: "killed by the memory limit
/// (limits.memory_mb = 64)" when the command itself died of it (`command_killed`), else that a
/// process of the sandbox was.
CORDON_API std::string memory_limit_note(std::uint64_t memory_mb, bool command_killed);

}  // namespace cordon
