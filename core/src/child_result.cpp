// The backend toolkit's plan-to-child and outcome-to-result halves (cordon/sdk/child.hpp).
#include <sched.h>
#include <sys/wait.h>
#include <cordon/sdk/child.hpp>

#include <cerrno>
#include <cstring>

#include "spawn_guard.hpp"

namespace cordon::sdk {

namespace {

RunResult setup_failure(const std::string& message) {
  RunResult r;
  r.error = Error(code::kIsolationFailed, message, "the command did not run");
  return r;
}

const char* rlimit_name(int resource) {
  switch (resource) {
    case RLIMIT_NOFILE:
      return "RLIMIT_NOFILE";
    case RLIMIT_CPU:
      return "RLIMIT_CPU";
    case RLIMIT_FSIZE:
      return "RLIMIT_FSIZE";
    case RLIMIT_CORE:
      return "RLIMIT_CORE";
    default:
      return "a resource limit";
  }
}

const char* namespace_step(int flag) {
  switch (flag) {
    case CLONE_NEWUSER:
      return "map the user namespace's ids";
    case CLONE_NEWNS:
      return "make the mount namespace";
    case CLONE_NEWPID:
      return "mount a fresh /proc";
    case CLONE_NEWIPC:
      return "mount a fresh /dev/mqueue";
    case CLONE_NEWNET:
      return "bring up loopback";
    default:
      return "create the namespaces";
  }
}

bool not_found(int err) { return err == ENOENT || err == ENOTDIR || err == ENAMETOOLONG; }

// A failure before the command was executed, or none.
std::optional<RunResult> failed_start(const ChildOutcome& o, const Plan& plan) {
  switch (o.failed_stage) {
    case ChildStage::none:
      return std::nullopt;
    case ChildStage::exec: {
      RunResult r;
      r.error = exec_failure(plan.argv.front(), o.error);
      r.exit_code = exec_failure_status(o.error);
      return r;
    }
    case ChildStage::chdir:
      return setup_failure("cannot enter workspace '" + plan.workspace.string() +
                           "': " + std::strerror(o.error));
    case ChildStage::filter:
      return setup_failure(std::string("cannot install the seccomp filter: ") +
                           std::strerror(o.error));
    case ChildStage::namespaces:
      return setup_failure(std::string("cannot ") + namespace_step(o.failed_item) + ": " +
                           std::strerror(o.error));
    case ChildStage::user:
      return setup_failure("cannot run the command as uid " +
                           std::to_string(static_cast<unsigned>(o.failed_item)) + ": " +
                           std::strerror(o.error));
    case ChildStage::rlimit:
      return setup_failure(std::string("cannot set ") + rlimit_name(o.failed_item) + ": " +
                           std::strerror(o.error));
    case ChildStage::unwaitable: {
      RunResult r;
      r.error = children_not_waitable().value_or(
          Error(code::kBackendResource, "this process could not wait for the command's processes"));
      return r;
    }
    default:
      return setup_failure(std::string("cannot start the command: ") + std::strerror(o.error));
  }
}

}  // namespace

Error exec_failure(const std::string& program, int err, std::string hint) {
  if (not_found(err)) {
    if (hint.empty())
      hint = program.find('/') == std::string::npos
                 ? "searched the granted PATH; pass an absolute path or grant PATH"
                 : "the path is relative to the workspace";
    return Error(code::kNotFound, "program '" + program + "' not found", hint);
  }
  return Error(code::kNotExecutable,
               "program '" + program + "' is not executable: " + std::strerror(err), hint);
}

Error masked_program_failure(const std::string& program, const std::string& masked,
                             const std::vector<std::string>& blocked, bool exact) {
  std::string list;
  for (const auto& n : blocked) list += (list.empty() ? "'" : ", '") + n + "'";
  std::string where = masked.empty() || masked == program ? "" : " ('" + masked + "')";
  return Error(code::kBlockedCommand,
               "program '" + program + "' is masked in the sandbox" + where +
                   ": it is, or provides as an applet, a command blocked by "
                   "process.blocked_commands (" +
                   (exact ? "" : "one of ") + list + ")",
               "the policy does not allow this program; run the command with a program that "
               "does not provide a blocked one, or ask the operator if it is needed");
}

int exec_failure_status(int err) noexcept { return not_found(err) ? 127 : 126; }

std::vector<std::pair<int, rlim_t>> policy_rlimits(const Limits& l) {
  std::vector<std::pair<int, rlim_t>> out = {{RLIMIT_CORE, 0}};  // no core files anywhere
  if (l.max_open_files) out.emplace_back(RLIMIT_NOFILE, *l.max_open_files);
  if (l.cpu_seconds) out.emplace_back(RLIMIT_CPU, *l.cpu_seconds);
  if (l.max_file_size_mb) out.emplace_back(RLIMIT_FSIZE, *l.max_file_size_mb * 1024 * 1024);
  return out;
}

ChildSpec child_spec(const Plan& plan, const std::filesystem::path& home) {
  ChildSpec spec;
  auto path = plan.env.find("PATH");
  spec.exec_paths = exec_candidates(plan.argv.front(),
                                    path != plan.env.end() ? path->second : kDefaultSearchPath);
  spec.argv = plan.argv;
  for (const auto& [k, v] : plan.env)
    if (k != "HOME") spec.env.push_back(k + "=" + v);
  spec.env.push_back("HOME=" + home.string());
  spec.cwd = plan.workspace.string();
  spec.rlimits = policy_rlimits(plan.policy.limits);
  spec.stdin_data = plan.stdin_data;
  spec.deadline = plan.deadline;
  spec.guard = child_guard_supported();
  spec.stop = plan.stop;
  return spec;
}

RunResult child_result(const ChildOutcome& o, const Plan& plan) {
  if (o.fault) {
    RunResult r;
    r.error = Error(code::kBackendFault, "the command's supervisor failed: " + *o.fault);
    return r;
  }
  if (auto failed = failed_start(o, plan)) return *failed;
  RunResult r;
  if (o.wait_status && WIFEXITED(*o.wait_status)) r.exit_code = WEXITSTATUS(*o.wait_status);
  if (o.wait_status && WIFSIGNALED(*o.wait_status)) r.signal = WTERMSIG(*o.wait_status);
  r.timed_out = o.timed_out;
  r.cpu_user_seconds = o.cpu_user_seconds;
  r.cpu_system_seconds = o.cpu_system_seconds;
  r.cpu_seconds = o.cpu_user_seconds + o.cpu_system_seconds;
  if (o.stopped) r.notes.push_back("stopped: every process of the command was killed");
  if (o.leftovers > 0)
    r.notes.push_back(std::to_string(o.leftovers) + " process" + (o.leftovers == 1 ? "" : "es") +
                      " outlived the command and were killed");
  return r;
}

}  // namespace cordon::sdk
