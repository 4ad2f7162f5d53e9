// JobManager: start a supervised job, read its state, wait for it, stop it, clean up.
#include <cordon/config.hpp>
#include <cordon/jobs.hpp>
#include <cordon/policy_io.hpp>
#include <cordon/registry.hpp>
#include <cordon/request.hpp>
#include <cordon/runner.hpp>
#include <cordon/sdk/state_roots.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>

#include "job_files.hpp"
#include "job_log.hpp"
#include "job_reap.hpp"
#include "job_seal.hpp"
#include "job_spawn.hpp"
#include "job_spec.hpp"
#include "unique_fd.hpp"

namespace cordon {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

std::int64_t unix_ms(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

template <class T>
json::array to_json_array(const std::vector<T>& v) {
  json::array a;
  for (const auto& s : v) a.push_back(json::string(fs::path(s).string()));
  return a;
}

std::vector<std::string> strings_of(const json::object& o, const char* key) {
  std::vector<std::string> out;
  if (auto* v = o.if_contains(key); v && v->is_array())
    for (const auto& s : v->get_array())
      if (s.is_string()) out.emplace_back(s.get_string());
  return out;
}

// Names from env.pass, with the starting caller's values: the supervisor has no caller env.
std::map<std::string, std::string> passed_env(const Policy& p) {
  std::map<std::string, std::string> env;
  auto caller = caller_environment();
  for (const auto& name : p.env.pass)
    if (auto it = caller.find(name); it != caller.end()) env[name] = it->second;
  return env;
}

std::int64_t int_of(const json::object& o, const char* key) {
  auto* v = o.if_contains(key);
  return v && v->is_number() ? v->to_number<std::int64_t>() : 0;
}

// The live state: result.json when the job has ended, else whether its supervisor lives.
JobStatus status_of(const PrivateDir& dir, const std::optional<json::object>& result,
                    const json::object& job) {
  if (result) {
    if (result->contains("stopped") && result->at("stopped").as_bool()) return JobStatus::stopped;
    if (result->contains("error")) return JobStatus::failed;
    return JobStatus::exited;
  }
  auto sup = detail::supervisor_of(dir);
  if (!sup) {
    // Between start's fork and the first write of supervisor.json: young jobs are starting.
    bool young = unix_ms(std::chrono::system_clock::now()) - int_of(job, "created_ms") < 10000;
    return young ? JobStatus::running : JobStatus::lost;
  }
  bool alive = sup->alive();
  // The result may have landed between the two reads.
  if (!alive && dir.open_file(detail::kResultFile, O_RDONLY)) return JobStatus::exited;
  return alive ? JobStatus::running : JobStatus::lost;
}

JobInfo info_of(const std::string& id, const PrivateDir& dir) {
  auto job = detail::read_json(dir, detail::kJobFile);
  if (!job) throw Error(code::kNoSuchJob, "no background job with id '" + id + "'");
  auto result = detail::read_json(dir, detail::kResultFile);
  JobInfo info;
  info.id = id;
  info.dir = dir.path();
  info.log = dir.path() / detail::kLogFile;
  info.argv = strings_of(*job, "argv");
  info.workspace = detail::string_member(*job, "workspace");
  info.backend = detail::string_member(*job, "backend");
  info.policy_name = detail::string_member(*job, "policy_name");
  info.created =
      std::chrono::system_clock::time_point(std::chrono::milliseconds(int_of(*job, "created_ms")));
  auto sup = detail::supervisor_of(dir);
  if (sup) info.supervisor_pid = sup->pid;
  info.status = status_of(dir, result, *job);
  if (info.status == JobStatus::lost && sup)
    info.live_processes = detail::session_processes(sup->session, sup->ticks).size();
  if (result) {
    info.result = detail::result_from_json(*result);
    if (auto* d = result->if_contains("log_dropped_bytes"))
      info.log_dropped_bytes = d->to_number<std::uint64_t>();
    if (info.status == JobStatus::exited && !result->contains("exit_code"))
      info.status = JobStatus::failed;
  }
  return info;
}

}  // namespace

const char* to_string(JobStatus s) {
  switch (s) {
    case JobStatus::running:
      return "running";
    case JobStatus::exited:
      return "exited";
    case JobStatus::stopped:
      return "stopped";
    case JobStatus::failed:
      return "failed";
    case JobStatus::lost:
      return "lost";
  }
  return "lost";
}

fs::path default_job_state_dir() {
  const fs::path rest = fs::path("cordon") / "jobs";
  if (auto x = env_dir("XDG_STATE_HOME"); !x.empty()) return x / rest;
  if (auto home = env_dir("HOME"); !home.empty()) return home / ".local" / "state" / rest;
  // Never a shared directory such as /tmp: another user could prepare it.
  if (::geteuid() == 0) return fs::path("/var/lib") / rest;
  if (auto home = detail::invoking_home(); home.is_absolute() && home != "/")
    return home / ".local" / "state" / rest;
  return {};
}

JobManager::JobManager(JobManagerOptions options) : options_(std::move(options)) {
  if (options_.state_dir.empty()) options_.state_dir = default_job_state_dir();
  if (options_.cordon_exe.empty()) options_.cordon_exe = detail::default_cordon_exe();
}

JobManager::~JobManager() = default;

std::optional<PrivateDir> JobManager::root() const {
  if (options_.state_dir.empty())
    throw Error(code::kJobState, "no job state directory: neither XDG_STATE_HOME nor HOME is set",
                "pass --state-dir, or set XDG_STATE_HOME");
  return PrivateDir::open(fs::absolute(options_.state_dir));
}

PrivateDir JobManager::dir_of(const std::string& id) const {
  auto root = detail::valid_job_id(id) ? this->root() : std::nullopt;
  auto dir = root ? root->open_subdir(id) : std::nullopt;
  if (!dir) throw Error(code::kNoSuchJob, "no background job with id '" + id + "'");
  return std::move(*dir);
}

JobInfo JobManager::start(const JobSpec& spec) {
  Policy policy = spec.policy;
  policy.extends.reset();
  if (spec.timeout)
    if (auto longer = job_timeout_loosening(policy, *spec.timeout, "the job's timeout"))
      throw *longer;
  // A job runs until stopped unless its lifetime is capped: the deadline of its run.
  policy.limits.timeout = spec.timeout ? spec.timeout : policy.limits.job_lifetime;
  Config config = load_config(options_.config);
  RegistryOptions ro;
  ro.plugin_dirs = options_.plugin_dirs;
  ro.pins = config.pins;
  ro.state_dir = default_backend_state_dir();
  Registry registry(ro);
  DispatchRequest request{derive_requirements(policy), spec.backend, policy.backend.prefer,
                          policy.name, config.dispatch_order};
  Decision decision = choose_for_run(registry, request, policy, config.backends);
  if (!decision.chosen)
    throw decision.refusal.value_or(Error(code::kUnproven, "no backend can run this job"));

  root();  // refuses early without a state directory
  PrivateDir root = PrivateDir::create(fs::absolute(options_.state_dir));
  std::string id = detail::new_job_id();
  PrivateDir dir = root.subdir(id);
  std::vector<fs::path> plugin_dirs;
  for (const auto& d : options_.plugin_dirs) plugin_dirs.push_back(fs::absolute(d));
  auto settings = backend_settings(policy, config.backends, *decision.chosen);
  // For display, and for collecting what the job leaves should its supervisor be lost.
  dir.write_file(detail::kPolicyFile, to_toml(policy));
  detail::write_sealed(dir, detail::kJobFile,
                       json::object{{"id", id},
                                    {"argv", to_json_array(spec.argv)},
                                    {"workspace", spec.workspace.string()},
                                    {"backend", *decision.chosen},
                                    {"policy_name", policy.name},
                                    {"created_ms", unix_ms(std::chrono::system_clock::now())},
                                    {"shell_unsafe", spec.shell_unsafe},
                                    {"settings", settings},
                                    {"plugin_dirs", to_json_array(plugin_dirs)}});
  detail::SupervisorSpec s{root.path(),      id,
                           to_toml(policy),  spec.argv,
                           spec.workspace,   detail::invoking_home(),
                           *decision.chosen, passed_env(policy),
                           spec.stdin_data,  spec.shell_unsafe,
                           plugin_dirs,      config.pins,
                           config.backends,  {root.path()}};
  if (options_.config) s.protected_paths.push_back(fs::absolute(*options_.config));
  // The supervisor gets the policy as text: the files it came from are handed on as paths.
  for (const auto& f : policy.files) s.protected_paths.emplace_back(f);
  for (const auto& p : spec.protected_paths) s.protected_paths.push_back(fs::absolute(p));
  OwnedFd handed = detail::sealed_memfd(detail::encode_spec(s));
  auto sup = detail::spawn_supervisor(options_.cordon_exe, dir.path(), handed.get());
  detail::write_sealed(
      dir, detail::kSupervisorFile,
      json::object{{"pid", sup.pid}, {"start_ticks", sup.start_ticks}, {"session", sup.session}});
  started_.push_back(id);
  return info_of(id, dir);
}

JobInfo JobManager::status(const std::string& id) const { return info_of(id, dir_of(id)); }

namespace {

// The job's log, open for reading (none yet: -1); CRD6001 for an unknown job.
OwnedFd open_log(const PrivateDir& dir, const std::string& id) {
  if (!dir.open_file(detail::kJobFile, O_RDONLY))
    throw Error(code::kNoSuchJob, "no background job with id '" + id + "'");
  return dir.open_file(detail::kLogFile, O_RDONLY);
}

}  // namespace

JobOutput JobManager::output_tail(const std::string& id, std::size_t lines) const {
  auto log = open_log(dir_of(id), id);
  return detail::tail_lines(log.get(), lines);
}

std::string JobManager::output(const std::string& id, std::size_t lines) const {
  return output_tail(id, lines).text;
}

JobOutput JobManager::output_since(const std::string& id, std::uint64_t offset,
                                   std::size_t max_bytes) const {
  auto log = open_log(dir_of(id), id);
  return detail::read_since(log.get(), offset, max_bytes);
}

namespace {

using detail::SupervisorRef;

// A pidfd of the job's supervisor, readable once it exits (it writes the result first); -1 when
// there is no such process (any more). Checked against the recorded start time after opening,
// so a reused pid is never waited on.
int supervisor_exit_fd(const PrivateDir& dir) {
  auto sup = detail::supervisor_of(dir);
  if (!sup || sup->pid <= 0) return -1;
  detail::Fd fd(static_cast<int>(::syscall(SYS_pidfd_open, sup->pid, 0)));
  if (fd.fd < 0 || !sup->alive()) return -1;
  return std::exchange(fd.fd, -1);
}

}  // namespace

JobInfo JobManager::wait(const std::string& id, std::optional<Duration> timeout) const {
  std::optional<std::chrono::steady_clock::time_point> deadline;
  if (timeout) deadline = std::chrono::steady_clock::now() + *timeout;
  // The supervisor's exit wakes the wait at once; the files are read again at least every
  // 100 ms, and polled with a growing pause when the process cannot be watched.
  detail::Fd exited(supervisor_exit_fd(dir_of(id)));
  auto pause = 10ms;
  for (;;) {
    JobInfo info = status(id);
    auto now = std::chrono::steady_clock::now();
    if (detail::ended(info.status) || (deadline && now >= *deadline)) return info;
    auto step = exited.fd >= 0 ? 100ms : pause;
    if (deadline)
      step = std::min(step, std::chrono::ceil<std::chrono::milliseconds>(*deadline - now));
    if (exited.fd >= 0) {
      pollfd p{exited.fd, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(step.count())) != 0) exited.reset();  // it has exited
    } else {
      std::this_thread::sleep_for(step);
      pause = std::min<std::chrono::milliseconds>(pause * 2, 100ms);
    }
  }
}

std::vector<JobInfo> JobManager::list(bool all, std::vector<std::string>* unreadable) const {
  std::vector<JobInfo> out;
  auto root = this->root();
  if (!root) return out;
  for (const auto& id : root->entries()) {
    if (!detail::valid_job_id(id)) continue;
    try {
      auto dir = root->open_subdir(id);
      if (!dir) continue;
      JobInfo info = info_of(id, *dir);
      if (all || info.status == JobStatus::running || info.status == JobStatus::lost)
        out.push_back(std::move(info));
    } catch (const Error& e) {
      // A job being made or removed has no record: nothing to say of it.
      if (unreadable && e.code() != code::kNoSuchJob)
        unreadable->push_back("job " + id + ": " + e.message());
    }
  }
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.created > b.created; });
  return out;
}

}  // namespace cordon
