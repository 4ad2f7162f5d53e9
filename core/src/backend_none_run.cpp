// The `none` backend's run: a private HOME, the toolkit's supervised child, the report.
#include <sys/wait.h>
#include <unistd.h>
#include <cordon/sdk/capabilities.hpp>
#include <cordon/sdk/child.hpp>
#include <cordon/sdk/log.hpp>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "backend_none.hpp"

namespace cordon::detail {

namespace fs = std::filesystem;

namespace {

RunResult setup_failure(const std::string& message) {
  RunResult r;
  r.error = Error(code::kIsolationFailed, message, "the command did not run");
  return r;
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

RunResult NoneBackend::do_run(const Plan& plan, OutputSink& sink) noexcept {
  fs::path home = plan.host_home;
  bool private_home = plan.policy.filesystem.home == HomeMode::private_home;
  if (private_home) {
    std::string error;
    auto made = make_private_home(error);
    if (!made) return setup_failure(error);
    home = *made;
  }
  sdk::ChildSpec spec = sdk::child_spec(plan, home);
  spec.grace = kNoneKillGrace;
  RunResult r = sdk::child_result(sdk::run_child(spec, sink), plan);
  for (const auto& req : plan.requirements)
    if (auto m = mechanism(req.id, plan, home); !m.empty()) r.report.push_back({req.id, m});
  if (private_home && !remove_home(home)) {
    cordon::log::warn(log(), "cannot remove private HOME '" + home.string() + "'");
    r.notes.push_back("the private HOME '" + home.string() + "' could not be removed");
  }
  return r;
}

}  // namespace cordon::detail
