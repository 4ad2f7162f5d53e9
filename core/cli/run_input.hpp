// What `cordon run` (and `cordon job start`) run: an argv after `--`, a --command string, or a
// JSON --request — turned into an Invocation under the policy's shell mode.
#pragma once

#include <cordon/jobs.hpp>
#include <cordon/runner.hpp>

#include <optional>
#include <string>
#include <vector>

namespace cordon::cli {

/// The command-line sources of one run; the request, when given, supplies what it names.
struct RunInput {
  std::optional<std::string> policy, backend, workspace, timeout, stdin_file, command, request;
  std::vector<std::string> argv;
  /// A request's text itself (`cordon serve`), instead of the file `request` names.
  std::optional<std::string> request_text;
  /// A policy loaded before (presets and `extends` applied, paths not resolved), used instead
  /// of loading `policy` again when the request names none: the server's, fixed at its start.
  const Policy* loaded_policy = nullptr;
  /// For `job start`: the timeouts are the job's lifetime, checked against
  /// limits.job_lifetime instead of limits.timeout.
  bool job = false;
};

/// Builds the invocation: loads the policy (file, preset or the request's inline policy),
/// prepares the command under the effective shell mode (CRD4001 / CRD4002 / CRD4003), refuses
/// blocked commands (CRD4005) and request env names the policy does not pass (CRD4006), and
/// timeouts longer than the policy's (--timeout: CRD4007, the request's: CRD4006). A request
/// file is one of the run's protected paths.
/// Throws Error / ErrorList.
Invocation build_invocation(const RunInput& input);

/// A background job of what `inv` runs (built with RunInput::job).
JobSpec job_spec(Invocation inv);

}  // namespace cordon::cli
