// The seatbelt backend: macOS's kernel sandbox (sandbox-exec with an SBPL profile generated from
// the policy, profile.hpp). cordon itself builds for Linux only, so here the backend is
// discovered, compiles its profile for review (`cordon policy compile --backend seatbelt`) and
// proves nothing: its probe says "macOS only", and dispatch refuses it with that reason. On
// macOS the probe is a canary run through sandbox-exec (canary.hpp).
#pragma once

#include <cordon/sdk/backend.hpp>

#include <string>
#include <vector>

#include "profile.hpp"

namespace cordon::seatbelt {

/// The launcher, by absolute path: a program planted earlier in PATH cannot stand in for it.
inline constexpr const char* kSandboxExec = "/usr/bin/sandbox-exec";

/// The profile input of `plan`: its policy and workspace, a HOME and TMPDIR of the run under
/// `run_dir`, the granted PATH's directories, cordon's own state.
ProfileInput profile_input(const Plan& plan, const std::string& run_dir);

/// The argv that runs `argv` under `profile`, whose text is in the file `profile_file`:
/// sandbox-exec -f PROFILE_FILE -D NAME=VALUE... -- argv.
std::vector<std::string> sandbox_exec_argv(const Profile& profile, const std::string& profile_file,
                                           const std::vector<std::string>& argv);

/// Runs `plan` under its profile through `launcher` (sandbox-exec, or a stand-in in the tests):
/// the programs' symlinks resolved on this host (host_programs.hpp), a private HOME and TMPDIR
/// of the run when the policy asks, the SDK's supervised child (the granted environment,
/// rlimits, the deadline and the stop token, the process group killed, output capped by the
/// caller), the report. What do_run() does on macOS.
RunResult run_sandboxed(const Plan& plan, OutputSink& sink, const std::string& launcher);

class SeatbeltBackend final : public Backend {
 public:
  explicit SeatbeltBackend(BackendContext context) : Backend(std::move(context)) {}

 protected:
  ProbeResult do_probe() override;
  RunResult do_run(const Plan& plan, OutputSink& sink) override;
  std::optional<std::string> do_compile(const Plan& plan) override;
};

}  // namespace cordon::seatbelt
