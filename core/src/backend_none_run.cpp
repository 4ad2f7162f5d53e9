// The `none` backend's run: a private HOME, rlimits, the supervised child, the report.
#include <sys/wait.h>
#include <unistd.h>
#include <cordon/capabilities.hpp>
#include <cordon/log.hpp>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "backend_none.hpp"
#include "spawn_guard.hpp"

namespace cordon::detail {

namespace fs = std::filesystem;

namespace {

constexpr const char* kDefaultPath = "/usr/local/bin:/usr/bin:/bin";

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

std::optional<fs::path> make_private_home(std::string& error) {
  std::error_code ec;
  fs::path tmp = fs::temp_directory_path(ec);
  std::string templ = ((ec ? fs::path("/tmp") : tmp) / "cordon-home-XXXXXX").string();
  if (::mkdtemp(templ.data())) return fs::path(templ);
  error = "cannot create a private HOME under '" + tmp.string() + "': " + std::strerror(errno);
  return std::nullopt;
}

// The command may have left unreadable directories behind: make them removable first.
bool remove_home(const fs::path& home) {
  std::error_code ec;
  if (fs::remove_all(home, ec) != static_cast<std::uintmax_t>(-1) && !ec) return true;
  for (auto it = fs::recursive_directory_iterator(
           home, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->is_directory(ec) && !it->is_symlink(ec))
      fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
  fs::permissions(home, fs::perms::owner_all, fs::perm_options::add, ec);
  ec.clear();
  fs::remove_all(home, ec);
  return !ec;
}

SpawnSpec spec_of(const Plan& plan, const fs::path& home) {
  SpawnSpec spec;
  auto path = plan.env.find("PATH");
  spec.exec_paths =
      exec_candidates(plan.argv.front(), path != plan.env.end() ? path->second : kDefaultPath);
  spec.argv = plan.argv;
  for (const auto& [k, v] : plan.env)
    if (k != "HOME") spec.env.push_back(k + "=" + v);
  spec.env.push_back("HOME=" + home.string());
  spec.cwd = plan.workspace.string();
  spec.rlimits = none_rlimits(plan.policy.limits);
  spec.stdin_data = plan.stdin_data;
  spec.deadline = plan.deadline;
  spec.grace = kNoneKillGrace;
  spec.guard = guard_supported();
  spec.stop = plan.stop;
  return spec;
}

std::string mechanism(std::string_view id, const Plan& plan, const fs::path& home) {
  const auto& l = plan.policy.limits;
  if (id == cap::env_grant)
    return "execve() with only the " + std::to_string(plan.env.size() + 1) + " granted variables";
  if (id == cap::home_private)
    return "HOME=" + home.string() + ", mode 0700, removed after the run";
  if (id == cap::limit_files && l.max_open_files)
    return "RLIMIT_NOFILE = " + std::to_string(*l.max_open_files);
  if (id == cap::limit_cpu && l.cpu_seconds)
    return "RLIMIT_CPU = " + std::to_string(*l.cpu_seconds) + " s";
  if (id == cap::limit_file_size && l.max_file_size_mb)
    return "RLIMIT_FSIZE = " + std::to_string(*l.max_file_size_mb) + " MiB";
  if (id == cap::limit_timeout)
    return "deadline: SIGTERM to the process group, SIGKILL to every descendant " +
           std::to_string(kNoneKillGrace.count()) +
           " ms later (child subreaper; seccomp keeps the supervisor safe)";
  if (id == cap::identity_unprivileged)
    return "uid " + std::to_string(::geteuid()) + " without capabilities; no_new_privs";
  return {};
}

}  // namespace

std::vector<std::pair<int, rlim_t>> none_rlimits(const Limits& l) {
  std::vector<std::pair<int, rlim_t>> out = {{RLIMIT_CORE, 0}};  // no core files anywhere
  if (l.max_open_files) out.emplace_back(RLIMIT_NOFILE, *l.max_open_files);
  if (l.cpu_seconds) out.emplace_back(RLIMIT_CPU, *l.cpu_seconds);
  if (l.max_file_size_mb) out.emplace_back(RLIMIT_FSIZE, *l.max_file_size_mb * 1024 * 1024);
  return out;
}

RunResult none_result(const SpawnOutcome& o, const Plan& plan) {
  RunResult r;
  const std::string program = plan.argv.front();
  if (o.fault) {
    r.error = Error(code::kBackendFault, "backend 'none' failed: " + *o.fault);
    return r;
  }
  switch (o.failed_stage) {
    case SpawnStage::none:
      break;
    case SpawnStage::exec: {
      bool missing = o.error == ENOENT || o.error == ENOTDIR || o.error == ENAMETOOLONG;
      if (missing)
        r.error = Error(code::kNotFound, "program '" + program + "' not found",
                        program.find('/') == std::string::npos
                            ? "searched the granted PATH; pass an absolute path or grant PATH"
                            : "the path is relative to the workspace");
      else
        r.error = Error(code::kNotExecutable,
                        "program '" + program + "' is not executable: " + std::strerror(o.error));
      break;
    }
    case SpawnStage::chdir:
      return setup_failure("cannot enter workspace '" + plan.workspace.string() +
                           "': " + std::strerror(o.error));
    case SpawnStage::rlimit:
      return setup_failure(std::string("cannot set ") + rlimit_name(o.failed_item) + ": " +
                           std::strerror(o.error));
    default:
      return setup_failure(std::string("cannot start the command: ") + std::strerror(o.error));
  }
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

RunResult NoneBackend::do_run(const Plan& plan, OutputSink& sink) noexcept {
  fs::path home = plan.host_home;
  bool private_home = plan.policy.filesystem.home == HomeMode::private_home;
  if (private_home) {
    std::string error;
    auto made = make_private_home(error);
    if (!made) return setup_failure(error);
    home = *made;
  }
  RunResult r = none_result(spawn_supervised(spec_of(plan, home), sink), plan);
  for (const auto& req : plan.requirements)
    if (auto m = mechanism(req.id, plan, home); !m.empty()) r.report.push_back({req.id, m});
  if (private_home && !remove_home(home)) {
    cordon::log::warn(log(), "cannot remove private HOME '" + home.string() + "'");
    r.notes.push_back("the private HOME '" + home.string() + "' could not be removed");
  }
  return r;
}

}  // namespace cordon::detail
