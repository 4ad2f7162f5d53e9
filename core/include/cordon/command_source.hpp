// From what the caller gave (an argv, or one command string) to the argv a backend runs, under
// the policy's shell mode. Also the blocked-command check on the resolved program.
#pragma once

#include <cordon/command.hpp>
#include <cordon/sdk/error.hpp>
#include <cordon/sdk/export.hpp>
#include <cordon/sdk/policy.hpp>
#include <cordon/sdk/requirements.hpp>

#include <optional>
#include <string>
#include <vector>

namespace cordon {

/// The environment variable that can make the shell mode stricter, never looser.
inline constexpr const char* kShellEnv = "CORDON_SHELL";

/// The shell mode in force: the policy's, lowered (never raised) by CORDON_SHELL when it is set
/// (`env_value`, may be null). Throws Error CRD4007 for a CORDON_SHELL that is not a mode.
CORDON_API ShellMode effective_shell_mode(const Policy& policy, const char* env_value);

/// What the caller gave: an argument vector, or a command string. Exactly one is set.
struct CommandInput {
  std::vector<Argument> argv;
  std::optional<std::string> command;
};

/// What runs, and what that asks of the backend.
struct PreparedCommand {
  std::vector<std::string> argv;
  bool shell_unsafe = false;     ///< /bin/sh -c on whatever backend, by the caller's choice
  bool shell_sandboxed = false;  ///< /bin/sh -c, only on a backend that contains it
  /// Requirements the shell adds (sandboxed: the backend must prove containment).
  Requirements extra_requirements;
  std::vector<std::string> notes;
};

/// Prepares the command. An argv is checked (CRD4002 / CRD4003) and used as it is. A command
/// string: mode off splits it by POSIX word rules and refuses shell operators (CRD4001);
/// sandboxed and unsafe hand it to /bin/sh -c. Pure.
CORDON_API PreparedCommand prepare_command(const CommandInput& input, ShellMode mode);

/// Refuses (CRD4005) a program that process.blocked_commands names — by name or by path —
/// after resolving it as the sandbox would: through `path_env` (the granted PATH) when it has
/// no slash, relative to `workspace` when relative, and through symlinks. For `sh -c STRING`
/// the first word of each simple command in the string is checked too. This is a first line
/// only: the backend must prove fs.exec.block as well.
CORDON_API void check_blocked_commands(const std::vector<std::string>& argv, const Policy& policy,
                                       const std::string& path_env, const std::string& workspace);

}  // namespace cordon
