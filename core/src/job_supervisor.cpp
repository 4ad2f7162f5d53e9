// The supervisor of one background job: runs it through the backend chosen at start, stops it
// when asked, and records the outcome so that any later cordon process can read it.
#include <cordon/config.hpp>
#include <cordon/jobs.hpp>
#include <cordon/policy_loader.hpp>
#include <cordon/registry.hpp>
#include <cordon/request.hpp>
#include <cordon/runner.hpp>

#include <signal.h>
#include <sys/prctl.h>

#include <condition_variable>
#include <limits>
#include <thread>

#include "job_files.hpp"
#include "job_log.hpp"

namespace cordon {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

std::string text_of(const json::object& o, const char* key) {
  auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

// Waits for SIGTERM / SIGINT / SIGHUP on a thread of its own (they are blocked everywhere
// else); a stop asks the backend to terminate, then to kill once the grace has passed.
class StopWatcher {
 public:
  StopWatcher(fs::path dir, std::shared_ptr<StopToken> token)
      : dir_(std::move(dir)), token_(std::move(token)) {
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
      int sig = 0;
      if (sigwait(&set_, &sig) != 0 || sig == SIGUSR1) return;
      stopped_ = true;
      token_->request(StopToken::Level::terminate);
      escalate_after(grace());
    }
  }
  std::chrono::milliseconds grace() const {
    auto stop = detail::read_json(dir_ / detail::kStopFile);
    if (stop && stop->contains("grace_ms"))
      return std::chrono::milliseconds(stop->at("grace_ms").to_number<std::int64_t>());
    return std::chrono::seconds(5);
  }
  void escalate_after(std::chrono::milliseconds grace) {
    std::thread([token = token_, grace] {
      std::this_thread::sleep_for(grace);
      token->request(StopToken::Level::kill);
    }).detach();
  }

  fs::path dir_;
  std::shared_ptr<StopToken> token_;
  sigset_t set_{};
  std::thread thread_;
  std::atomic<bool> stopped_{false};
};

Invocation invocation_of(const fs::path& dir, const json::object& job, const Config& config) {
  Invocation inv;
  inv.workspace = text_of(job, "workspace");
  inv.host_home = text_of(job, "host_home");
  inv.policy = resolve_paths(load_policy_file(dir / detail::kPolicyFile),
                             PathContext{inv.workspace, inv.host_home});
  // The log keeps the newest output itself; no head-and-tail cap in memory.
  inv.policy.limits.max_output_bytes = std::numeric_limits<std::uint64_t>::max();
  for (const auto& a : job.at("argv").as_array()) inv.argv.emplace_back(a.as_string());
  inv.backend = text_of(job, "backend");
  if (auto* env = job.if_contains("env"); env && env->is_object())
    for (const auto& kv : env->get_object())
      inv.caller_env[kv.key()] = std::string(kv.value().as_string());
  if (auto* b64 = job.if_contains("stdin_base64"); b64 && b64->is_string())
    inv.stdin_data = decode_base64(b64->get_string());
  inv.shell_unsafe = job.contains("shell_unsafe") && job.at("shell_unsafe").as_bool();
  inv.config_backends = config.backends;
  return inv;
}

RegistryOptions registry_options(const json::object& job, const Config& config) {
  RegistryOptions ro;
  if (auto* dirs = job.if_contains("plugin_dirs"); dirs && dirs->is_array())
    for (const auto& d : dirs->get_array()) ro.plugin_dirs.emplace_back(std::string(d.as_string()));
  ro.pins = config.pins;
  ro.state_dir = default_backend_state_dir();
  return ro;
}

void write_result(const fs::path& dir, const RunOutcome& out, bool stopped, std::uint64_t dropped) {
  json::object r = detail::result_to_json(out.result);
  r["backend"] = out.backend;
  r["stopped"] = stopped;
  r["log_dropped_bytes"] = dropped;
  r["finished_ms"] = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  detail::write_file_atomic(dir / detail::kResultFile, json::serialize(r));
}

}  // namespace

int supervise_job(const fs::path& dir) {
  RunOutcome out;
  std::uint64_t dropped = 0;
  bool stopped = false;
  try {
    auto job = detail::read_json(dir / detail::kJobFile);
    if (!job) throw Error(code::kNoSuchJob, "no background job in '" + dir.string() + "'");
    std::string config_file = text_of(*job, "config");
    Config config =
        load_config(config_file.empty() ? std::nullopt : std::optional<fs::path>(config_file));
    Invocation inv = invocation_of(dir, *job, config);
    inv.stop = std::make_shared<StopToken>();
    detail::LogSink log(dir / detail::kLogFile, inv.policy.limits.max_log_bytes);
    Registry registry(registry_options(*job, config));
    {
      StopWatcher watcher(dir, inv.stop);
      out = run_invocation(registry, inv, log);
      stopped = watcher.stopped();
    }
    dropped = log.dropped();
  } catch (const ErrorList& e) {
    out.result.error = e.errors().front();
  } catch (const Error& e) {
    out.result.error = e;
  } catch (const std::exception& e) {
    out.result.error =
        Error(code::kBackendFault, std::string("job supervisor failed: ") + e.what());
  }
  write_result(dir, out, stopped, dropped);
  return 0;
}

}  // namespace cordon
