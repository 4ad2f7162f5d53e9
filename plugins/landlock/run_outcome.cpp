// The run's result from how it ended: status, errors, the limits' notes, the resources.
#include "run_outcome.hpp"

#include <sys/wait.h>
#include <cordon/sdk/child.hpp>

#include <cerrno>
#include <csignal>
#include <cstring>

namespace cordon::landlock {

namespace {

// The toolkit's wording, with the sandbox's own hints and the path that failed.
Error exec_error(const ChildReport& r, const std::string& program, const MaskedProgram& masked) {
  std::string what = r.detail;
  if (r.err == EACCES && masked)
    if (auto names = masked(what); !names.empty())
      return sdk::masked_program_failure(what, {}, names, true);
  if (r.err == EACCES)
    return Error(code::kNotExecutable, "'" + what + "' cannot be executed: permission denied",
                 "the policy may block it (blocked_commands, allowed_commands) or it is not "
                 "executable");
  Error e = sdk::exec_failure(
      program, r.err, "the program must be in PATH and in a readable directory (filesystem.read)");
  if (e.code() == code::kNotFound)
    return Error(e.code(), e.message() + " in the sandbox", e.hint());
  return Error(code::kNotExecutable, "'" + what + "' cannot be executed: " + std::strerror(r.err));
}

}  // namespace

Error setup_error(const ChildReport& r, const Identity& identity) {
  return Error(code::kIsolationFailed,
               std::string("isolation could not be established: ") + r.mechanism + ": " + r.detail +
                   ": " + std::strerror(r.err),
               "the command did not run; the sandbox runs as host uid " +
                   std::to_string(identity.uid) + " (" + identity.reason + ")");
}

Totals totals_of(const sdk::SandboxCgroup* cg) {
  if (!cg) return {};
  return {cg->oom_kills().value_or(0), cg->peak_memory()};
}

namespace {

double seconds(const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; }

// Which limit ended the run, in its notes; the memory limit can only have killed something
// where the group counted a kill.
void note_limits(const Plan& plan, const Totals& cg, RunResult& result) {
  if (cg.oom_kills == 0 || result.timed_out || !plan.policy.limits.memory_mb) return;
  result.notes.push_back(
      memory_limit_note(*plan.policy.limits.memory_mb, result.signal == SIGKILL));
}

}  // namespace

void fill_outcome(const Outcome& out, const Plan& plan, const Identity& identity, const Totals& cg,
                  const MaskedProgram& masked, RunResult& result) {
  if (out.failure && out.failure->kind == ChildReport::Kind::setup_failed) {
    result.error = setup_error(*out.failure, identity);
  } else if (out.failure) {
    result.error = exec_error(*out.failure, plan.argv.front(), masked);
    result.exit_code = sdk::exec_failure_status(out.failure->err);
  } else if (out.timed_out) {
    result.timed_out = true;
    result.signal = SIGKILL;
    result.notes.push_back("the deadline passed: every process of the sandbox was killed");
  } else if (out.stopped) {
    result.signal = SIGKILL;
    result.notes.push_back("stopped: every process of the sandbox was killed");
  } else if (out.exited && WIFEXITED(out.wait_status)) {
    result.exit_code = WEXITSTATUS(out.wait_status);
  } else if (out.exited && WIFSIGNALED(out.wait_status)) {
    result.signal = WTERMSIG(out.wait_status);
  } else if (cg.oom_kills > 0) {
    result.signal = SIGKILL;  // the kernel's OOM kill took the command before it was waited for
  } else {
    result.error =
        Error(code::kBackendFault, "the command's process ended without a status or a report");
  }
  note_limits(plan, cg, result);
  // The keeper reaps every orphan: its usage with the command's is the whole sandbox's.
  result.cpu_user_seconds = seconds(out.usage.ru_utime);
  result.cpu_system_seconds = seconds(out.usage.ru_stime);
  result.cpu_seconds = *result.cpu_user_seconds + *result.cpu_system_seconds;
  // ru_maxrss is one process's peak, not the sandbox's: only a memory group measures that.
  result.peak_memory_bytes = cg.peak_memory;
}

}  // namespace cordon::landlock
