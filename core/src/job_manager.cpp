// JobManager: start a supervised job, read its state, wait for it, stop it, clean up.
#include <cordon/config.hpp>
#include <cordon/jobs.hpp>
#include <cordon/policy_io.hpp>
#include <cordon/registry.hpp>
#include <cordon/request.hpp>
#include <cordon/runner.hpp>

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
#include "job_spawn.hpp"
#include "unique_fd.hpp"

namespace cordon {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

std::int64_t unix_ms(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

json::array to_json_array(const std::vector<std::string>& v) {
  json::array a;
  for (const auto& s : v) a.push_back(json::string(s));
  return a;
}

std::vector<std::string> strings_of(const json::object& o, const char* key) {
  std::vector<std::string> out;
  if (auto* v = o.if_contains(key); v && v->is_array())
    for (const auto& s : v->get_array())
      if (s.is_string()) out.emplace_back(s.get_string());
  return out;
}

std::string text_of(const json::object& o, const char* key) {
  auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

// Names from env.pass, with the starting caller's values: the supervisor has no caller env.
json::object passed_env(const Policy& p) {
  json::object env;
  auto caller = caller_environment();
  for (const auto& name : p.env.pass)
    if (auto it = caller.find(name); it != caller.end()) env[name] = it->second;
  return env;
}

// The live state: result.json when the job has ended, else whether its supervisor lives.
JobStatus status_of(const fs::path& dir, const std::optional<json::object>& result,
                    const json::object& job) {
  if (result) {
    if (result->contains("stopped") && result->at("stopped").as_bool()) return JobStatus::stopped;
    if (result->contains("error")) return JobStatus::failed;
    return JobStatus::exited;
  }
  auto sup = detail::read_json(dir / detail::kSupervisorFile);
  if (!sup) {
    // Between start's fork and its write of supervisor.json: young jobs are still starting.
    auto created = job.contains("created_ms") ? job.at("created_ms").to_number<std::int64_t>() : 0;
    bool young = unix_ms(std::chrono::system_clock::now()) - created < 10000;
    return young ? JobStatus::running : JobStatus::lost;
  }
  int pid = static_cast<int>(sup->at("pid").to_number<std::int64_t>());
  auto ticks = sup->at("start_ticks").to_number<std::uint64_t>();
  bool alive = ticks != 0 && detail::process_start_ticks(pid) == ticks;
  // The result may have landed between the two reads.
  if (!alive && fs::exists(dir / detail::kResultFile)) return JobStatus::exited;
  return alive ? JobStatus::running : JobStatus::lost;
}

JobInfo info_of(const std::string& id, const fs::path& dir) {
  auto job = detail::read_json(dir / detail::kJobFile);
  if (!job) throw Error(code::kNoSuchJob, "no background job with id '" + id + "'");
  auto result = detail::read_json(dir / detail::kResultFile);
  JobInfo info;
  info.id = id;
  info.dir = dir;
  info.log = dir / detail::kLogFile;
  info.argv = strings_of(*job, "argv");
  info.workspace = text_of(*job, "workspace");
  info.backend = text_of(*job, "backend");
  info.policy_name = text_of(*job, "policy_name");
  info.created = std::chrono::system_clock::time_point(std::chrono::milliseconds(
      job->contains("created_ms") ? job->at("created_ms").to_number<std::int64_t>() : 0));
  if (auto sup = detail::read_json(dir / detail::kSupervisorFile))
    info.supervisor_pid = static_cast<int>(sup->at("pid").to_number<std::int64_t>());
  info.status = status_of(dir, result, *job);
  if (result) {
    info.result = detail::result_from_json(*result);
    if (auto* d = result->if_contains("log_dropped_bytes"))
      info.log_dropped_bytes = d->to_number<std::uint64_t>();
    if (info.status == JobStatus::exited && !result->contains("exit_code"))
      info.status = JobStatus::failed;
  }
  return info;
}

bool ended(JobStatus s) { return s != JobStatus::running; }

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
  if (const char* x = std::getenv("XDG_STATE_HOME"); x && *x == '/')
    return fs::path(x) / "cordon" / "jobs";
  const char* home = std::getenv("HOME");
  return fs::path(home && *home ? home : "/tmp") / ".local" / "state" / "cordon" / "jobs";
}

JobManager::JobManager(JobManagerOptions options) : options_(std::move(options)) {
  if (options_.state_dir.empty()) options_.state_dir = default_job_state_dir();
  if (options_.cordon_exe.empty()) options_.cordon_exe = detail::default_cordon_exe();
}

JobManager::~JobManager() = default;

fs::path JobManager::dir_of(const std::string& id) const {
  if (!detail::valid_job_id(id))
    throw Error(code::kNoSuchJob, "no background job with id '" + id + "'");
  return options_.state_dir / id;
}

JobInfo JobManager::start(const JobSpec& spec) {
  Policy policy = spec.policy;
  policy.extends.reset();
  policy.limits.timeout = policy.limits.job_lifetime;  // a job runs until stopped unless capped
  Config config = load_config(options_.config);
  RegistryOptions ro;
  ro.plugin_dirs = options_.plugin_dirs;
  ro.pins = config.pins;
  ro.state_dir = default_backend_state_dir();
  Registry registry(ro);
  DispatchRequest request{derive_requirements(policy), spec.backend, policy.backend.prefer,
                          policy.name};
  Decision decision = choose_for_run(registry, request, policy, config.backends);
  if (!decision.chosen)
    throw decision.refusal.value_or(Error(code::kUnproven, "no backend can run this job"));

  detail::make_private_dir(options_.state_dir);
  std::string id = detail::new_job_id();
  fs::path dir = options_.state_dir / id;
  detail::make_private_dir(dir);
  detail::write_file_atomic(dir / detail::kPolicyFile, to_toml(policy));
  json::object job{{"id", id},
                   {"argv", to_json_array(spec.argv)},
                   {"workspace", spec.workspace.string()},
                   {"backend", *decision.chosen},
                   {"policy_name", policy.name},
                   {"created_ms", unix_ms(std::chrono::system_clock::now())},
                   {"shell_unsafe", spec.shell_unsafe},
                   {"env", passed_env(policy)},
                   {"host_home", detail::invoking_home().string()},
                   {"config", options_.config ? options_.config->string() : ""}};
  json::array dirs;
  for (const auto& d : options_.plugin_dirs) dirs.push_back(json::string(fs::absolute(d).string()));
  job["plugin_dirs"] = std::move(dirs);
  if (spec.stdin_data) job["stdin_base64"] = encode_base64(*spec.stdin_data);
  detail::write_file_atomic(dir / detail::kJobFile, json::serialize(job));

  auto sup = detail::spawn_supervisor(options_.cordon_exe, dir);
  detail::write_file_atomic(
      dir / detail::kSupervisorFile,
      json::serialize(json::object{{"pid", sup.pid}, {"start_ticks", sup.start_ticks}}));
  started_.push_back(id);
  return info_of(id, dir);
}

JobInfo JobManager::status(const std::string& id) const { return info_of(id, dir_of(id)); }

std::string JobManager::output(const std::string& id, std::size_t lines) const {
  auto dir = dir_of(id);
  if (!fs::exists(dir / detail::kJobFile))
    throw Error(code::kNoSuchJob, "no background job with id '" + id + "'");
  return detail::tail_lines(dir / detail::kLogFile, lines);
}

namespace {

// The supervisor of a running job, as recorded, for signalling only while it is still the same
// process (its start time in ticks must match).
struct SupervisorRef {
  int pid = 0;
  std::uint64_t ticks = 0;
  bool alive() const { return pid > 0 && detail::process_start_ticks(pid) == ticks; }
};

SupervisorRef supervisor_of(const fs::path& dir) {
  auto sup = detail::read_json(dir / detail::kSupervisorFile);
  if (!sup) return {};
  return {static_cast<int>(sup->at("pid").to_number<std::int64_t>()),
          sup->at("start_ticks").to_number<std::uint64_t>()};
}

// A pidfd of the job's supervisor, readable once it exits (it writes the result first); -1 when
// there is no such process (any more). Checked against the recorded start time after opening,
// so a reused pid is never waited on.
int supervisor_exit_fd(const fs::path& dir) {
  SupervisorRef sup = supervisor_of(dir);
  if (sup.pid <= 0) return -1;
  detail::Fd fd(static_cast<int>(::syscall(SYS_pidfd_open, sup.pid, 0)));
  if (fd.fd < 0 || !sup.alive()) return -1;
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
    if (ended(info.status) || (deadline && now >= *deadline)) return info;
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

std::optional<JobManager::PendingStop> JobManager::request_stop(const std::string& id,
                                                                Duration grace) {
  JobInfo info = status(id);
  if (ended(info.status)) return std::nullopt;
  auto dir = dir_of(id);
  detail::write_file_atomic(dir / detail::kStopFile,
                            json::serialize(json::object{{"grace_ms", grace.count()}}));
  auto sup = supervisor_of(dir);
  if (sup.alive()) ::kill(sup.pid, SIGTERM);
  return PendingStop{id, grace, sup.pid, sup.ticks};
}

JobInfo JobManager::finish_stop(const PendingStop& p) {
  JobInfo info = wait(p.id, p.grace + 10s);
  SupervisorRef sup{p.supervisor_pid, p.supervisor_ticks};
  if (!ended(info.status) && sup.alive()) {
    ::kill(sup.pid, SIGKILL);  // the supervisor did not finish: its sandbox dies with it
    info = wait(p.id, 5s);
  }
  return info;
}

JobInfo JobManager::stop(const std::string& id, Duration grace) {
  auto pending = request_stop(id, grace);
  return pending ? finish_stop(*pending) : status(id);
}

void JobManager::stop_all(Duration grace) {
  // Every job is asked first, so their graces run side by side rather than one after another.
  std::vector<PendingStop> pending;
  for (const auto& id : started_) {
    try {
      if (auto p = request_stop(id, grace)) pending.push_back(std::move(*p));
    } catch (const Error&) {
      // removed by someone else meanwhile
    }
  }
  for (const auto& p : pending) {
    try {
      finish_stop(p);
    } catch (const Error&) {
    }
  }
}

std::vector<JobInfo> JobManager::list(bool all) const {
  std::vector<JobInfo> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(options_.state_dir, ec)) {
    auto id = e.path().filename().string();
    if (!detail::valid_job_id(id)) continue;
    try {
      JobInfo info = info_of(id, e.path());
      if (all || info.status == JobStatus::running || info.status == JobStatus::lost)
        out.push_back(std::move(info));
    } catch (const Error&) {
      continue;  // a half-written or removed job
    }
  }
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.created > b.created; });
  return out;
}

void JobManager::remove(const std::string& id) {
  JobInfo info = status(id);
  if (!ended(info.status))
    throw Error(code::kJobRunning, "job '" + id + "' is still running",
                "stop it first with 'cordon job stop " + id + "'");
  fs::remove_all(info.dir);
}

std::size_t JobManager::gc() {
  std::size_t n = 0;
  for (const auto& info : list(true))
    if (ended(info.status)) fs::remove_all(info.dir), ++n;
  return n;
}

}  // namespace cordon
