// The supervisor of one background job: runs the job its starter handed over (a sealed memory
// file, never a file of the job directory) through the backend chosen at start, stops it when
// asked, and records the outcome so that any later cordon process can read it.
#include <cordon/config.hpp>
#include <cordon/jobs.hpp>
#include <cordon/policy_loader.hpp>
#include <cordon/registry.hpp>
#include <cordon/request.hpp>
#include <cordon/runner.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <limits>
#include <thread>

#include "job_files.hpp"
#include "job_log.hpp"
#include "job_seal.hpp"
#include "job_spec.hpp"

namespace cordon {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

// Waits for SIGTERM / SIGINT / SIGHUP on a thread of its own (they are blocked everywhere
// else); a stop asks the backend to terminate, then to kill once the grace has passed. The
// grace comes with the signal (JobManager::stop queues it), bounded by kMaxStopGrace.
class StopWatcher {
 public:
  explicit StopWatcher(std::shared_ptr<StopToken> token) : token_(std::move(token)) {
    sigemptyset(&set_);
    for (int s : {SIGTERM, SIGINT, SIGHUP, SIGUSR1}) sigaddset(&set_, s);
    pthread_sigmask(SIG_BLOCK, &set_, nullptr);
    thread_ = std::thread([this] { watch(); });
  }
  ~StopWatcher() {
    ::kill(::getpid(), SIGUSR1);  // wakes sigwait: the run is over
    thread_.join();
  }
  bool stopped() const { return stopped_; }

 private:
  void watch() {
    for (;;) {
      siginfo_t info{};
      int sig = sigwaitinfo(&set_, &info);
      if (sig < 0 && errno == EINTR) continue;
      if (sig < 0 || sig == SIGUSR1) return;
      stopped_ = true;
      token_->request(StopToken::Level::terminate);
      escalate_after(grace_of(info));
    }
  }
  static Duration grace_of(const siginfo_t& info) {
    if (info.si_code != SI_QUEUE) return std::chrono::seconds(5);  // a plain kill
    return std::clamp(Duration(info.si_value.sival_int), Duration::zero(), kMaxStopGrace);
  }
  void escalate_after(std::chrono::milliseconds grace) {
    std::thread([token = token_, grace] {
      std::this_thread::sleep_for(grace);
      token->request(StopToken::Level::kill);
    }).detach();
  }

  std::shared_ptr<StopToken> token_;
  sigset_t set_{};
  std::thread thread_;
  std::atomic<bool> stopped_{false};
};

Invocation invocation_of(const detail::SupervisorSpec& spec) {
  Invocation inv;
  inv.workspace = spec.workspace;
  inv.host_home = spec.host_home;
  inv.policy = resolve_paths(load_policy_text(spec.policy_toml, detail::kPolicyFile),
                             PathContext{inv.workspace, inv.host_home});
  // The log keeps the newest output itself; no head-and-tail cap in memory.
  inv.policy.limits.max_output_bytes = std::numeric_limits<std::uint64_t>::max();
  inv.argv = spec.argv;
  inv.backend = spec.backend;
  inv.caller_env = spec.env;
  inv.stdin_data = spec.stdin_data;
  inv.shell_unsafe = spec.shell_unsafe;
  inv.config_backends = spec.config_backends;
  inv.protected_paths = spec.protected_paths;
  return inv;
}

RegistryOptions registry_options(const detail::SupervisorSpec& spec) {
  RegistryOptions ro;
  ro.plugin_dirs = spec.plugin_dirs;
  ro.pins = spec.pins;
  ro.state_dir = default_backend_state_dir();
  return ro;
}

// The job directory the spec names, verified from "/" as the starter's was.
PrivateDir job_dir(const detail::SupervisorSpec& spec, const fs::path& named) {
  auto root = PrivateDir::open(spec.state_dir);
  auto dir = root ? root->open_subdir(spec.id) : std::nullopt;
  if (!dir || dir->path() != named.lexically_normal())
    throw Error(code::kJobState, "the job's spec does not name '" + named.string() + "'");
  return std::move(*dir);
}

void record_supervisor(const PrivateDir& dir) {
  json::object sup{{"pid", ::getpid()},
                   {"start_ticks", detail::process_start_ticks(::getpid())},
                   {"session", ::getsid(0)}};
  detail::write_sealed(dir, detail::kSupervisorFile, std::move(sup));
}

void write_result(const PrivateDir& dir, const RunOutcome& out, bool stopped,
                  std::uint64_t dropped) {
  json::object r = detail::result_to_json(out.result);
  r["backend"] = out.backend;
  r["stopped"] = stopped;
  r["log_dropped_bytes"] = dropped;
  r["finished_ms"] = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  detail::write_sealed(dir, detail::kResultFile, std::move(r));
}

}  // namespace

int supervise_job(const fs::path& named) {
  RunOutcome out;
  std::uint64_t dropped = 0;
  bool stopped = false;
  std::optional<PrivateDir> dir;
  try {
    auto spec = detail::decode_spec(detail::read_sealed(detail::kSpecFd));
    ::close(detail::kSpecFd);
    dir = job_dir(spec, named);
    record_supervisor(*dir);  // also when the starter died before it could
    Invocation inv = invocation_of(spec);
    inv.stop = std::make_shared<StopToken>();
    detail::LogSink log(*dir, inv.policy.limits.max_log_bytes);
    Registry registry(registry_options(spec));
    {
      StopWatcher watcher(inv.stop);
      out = run_invocation(registry, inv, log);
      stopped = watcher.stopped();
    }
    if (out.result.timed_out && inv.policy.limits.timeout)
      out.result.notes.push_back("timed out: the job's lifetime of " +
                                 format_duration(*inv.policy.limits.timeout) +
                                 " ran out and the job was stopped");
    dropped = log.dropped();
  } catch (const ErrorList& e) {
    out.result.error = e.errors().front();
  } catch (const Error& e) {
    out.result.error = e;
  } catch (const std::exception& e) {
    out.result.error =
        Error(code::kBackendFault, std::string("job supervisor failed: ") + e.what());
  }
  try {
    if (!dir) dir = PrivateDir::open(named);  // verified from "/" all the same
    if (dir) write_result(*dir, out, stopped, dropped);
  } catch (const Error&) {
    return 1;  // nowhere to record it: the job shows as lost
  }
  return 0;
}

}  // namespace cordon
