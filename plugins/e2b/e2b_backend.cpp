// A run: a sandbox, the workspace copied in, the command streamed through the SDK's pump, the
// sandbox killed — at the end, at the deadline, on a kill request, after any failure.
#include "e2b_backend.hpp"

#include <sys/stat.h>
#include <unistd.h>
#include <cordon/sdk/capabilities.hpp>
#include <cordon/sdk/log.hpp>
#include <cordon/sdk/pump.hpp>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <thread>

#include "download.hpp"
#include "envd.hpp"
#include "paths.hpp"
#include "script.hpp"
#include "upload.hpp"

namespace cordon::e2b {

namespace {

constexpr auto kRetryAfter = std::chrono::seconds(30);
constexpr auto kHelperLimit = std::chrono::seconds(60);
// envd's own kill (of the one pid) comes this long after cordon's deadline, as a backstop.
constexpr auto kBackstop = std::chrono::seconds(5);
constexpr const char* kArchive = "/tmp/.cordon-e2b-workspace.tar";
constexpr const char* kStdinFile = "/tmp/.cordon-e2b-stdin";

bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    int n = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : -1;
    if (n < 0 || i + n >= s.size() + (n == 0 ? 1 : 0)) return false;
    for (int k = 1; k <= n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return false;
    i += n + 1;
  }
  return true;
}

// envd takes JSON strings: bytes that are not UTF-8 would arrive changed, never as sent.
void check_text(const Plan& plan) {
  auto refuse = [](const std::string& what) {
    throw Error(code::kControlChar, what + " is not valid UTF-8: the sandbox's API carries text",
                "pass the bytes in a file of the workspace or through stdin");
  };
  for (const auto& a : plan.argv)
    if (!valid_utf8(a) || a.find('\0') != std::string::npos) refuse("an argument");
  // A shell's `exec` may read a leading '-' as its own option (bash: exec -l runs nothing).
  if (!plan.argv.empty() && !plan.argv[0].empty() && plan.argv[0][0] == '-')
    throw Error(code::kFlagInjection, "the program's name starts with '-'",
                "name the program by a path, e.g. './" + plan.argv[0] + "'");
  for (const auto& [k, v] : plan.env)
    if (!valid_utf8(v)) refuse("the value of " + k);
}

// A local path as the sandbox sees it: beneath the workspace, rebased on the remote workspace.
std::string remote_path(const std::string& local, const std::string& local_ws,
                        const std::string& remote_ws) {
  if (!within(local, local_ws)) return local;
  return remote_ws + local.substr(local_ws.size());
}

RunScript run_script(const Plan& plan, const Settings& s, const std::string& ws) {
  RunScript r;
  r.user = s.user;
  r.workspace = ws;
  if (plan.stdin_data) r.stdin_file = kStdinFile;
  r.env = plan.env;
  const Limits& l = plan.policy.limits;
  if (l.max_open_files) r.ulimits.push_back({'n', *l.max_open_files});
  if (l.cpu_seconds) r.ulimits.push_back({'t', *l.cpu_seconds});
  if (l.max_file_size_mb) r.ulimits.push_back({'f', *l.max_file_size_mb * 2048});
  r.require_unprivileged = requires_capability(plan.requirements, cap::fs_write_confine) ||
                           requires_capability(plan.requirements, cap::identity_unprivileged);
  r.argv = plan.argv;
  return r;
}

// Kills the sandbox when the run is over, however it ends.
struct KillAfter {
  const Api& api;
  std::string id;
  ~KillAfter() { api.kill(id); }
};

// Renews the sandbox's lease every half lease until the run is over.
class Renewer {
 public:
  Renewer(const Api& api, std::string id, long lease, spdlog::logger& logger)
      : thread_([this, &api, id, lease, &logger] {
          std::unique_lock lock(mutex_);
          while (!cv_.wait_for(lock, std::chrono::seconds(lease / 2), [this] { return done_; })) {
            lock.unlock();
            try {
              api.renew(id, lease);
            } catch (const Error& e) {
              cordon::log::warn(logger, "renewing sandbox " + id + " failed: " + e.what());
            }
            lock.lock();
          }
        }) {}
  ~Renewer() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  Renewer(const Renewer&) = delete;
  Renewer& operator=(const Renewer&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

std::vector<std::string> excluded_paths(const Plan& plan) {
  std::vector<std::string> out = plan.policy.filesystem.blocked;
  for (const auto& p : plan.protected_paths) out.push_back(p.string());
  return out;
}

}  // namespace

E2bBackend::~E2bBackend() = default;

std::vector<Error> E2bBackend::do_validate_settings(const boost::json::object& settings) {
  return validate(settings);
}

ProbeResult E2bBackend::do_probe() { return do_probe_for({}); }

const ServiceProof& E2bBackend::proof_for(const Settings& s) {
  const auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(mutex_);
    if (auto it = proofs_.find(s.key()); it != proofs_.end()) return it->second;
    if (auto it = failed_.find(s.key()); it != failed_.end() && now < it->second.first)
      throw it->second.second;
  }
  auto cache = cache_for(s);
  if (auto hit = cache ? cache->load() : std::nullopt)
    if (auto cached = from_cache(hit->facts)) {
      std::lock_guard lock(mutex_);
      return proofs_.emplace(s.key(), std::move(*cached)).first->second;
    }
  ServiceProof proof;
  try {
    proof = probe_service(s, api_key(s));
    if (auto facts = cacheable(proof); facts && cache) cache->store(*facts);
  } catch (const Error& e) {
    std::lock_guard lock(mutex_);
    failed_.insert_or_assign(s.key(), std::pair{now + kRetryAfter, e});
    throw;
  }
  std::lock_guard lock(mutex_);
  return proofs_.emplace(s.key(), std::move(proof)).first->second;
}

std::optional<sdk::ProbeCache> E2bBackend::cache_for(const Settings& s) const {
  // One entry per service, template and user: a stable name from the settings' key.
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s.key()) h = (h ^ c) * 1099511628211ull;
  char name[32];
  std::snprintf(name, sizeof name, "probe-%016llx", static_cast<unsigned long long>(h));
  return sdk::ProbeCache::open(context().state_dir,
                               {.code = reinterpret_cast<const void*>(&probe_service),
                                .fingerprint_extras = "e2b 1\n" + s.key(),
                                .name = name});
}

ProbeResult E2bBackend::do_probe_for(const boost::json::object& settings) {
  Settings s = settings_of(settings);
  const ServiceProof& p = proof_for(s);
  if (s.upload && !p.tar) {
    ProbeResult r = p.result;
    r.available = false;
    r.reason = "template '" + s.template_id + "' has no tar to copy the workspace in with";
    r.unusable = Error(code::kBackendUnavailable, r.reason,
                       "set backends.e2b.upload = false, or use a template with tar");
    return r;
  }
  return p.result;
}

namespace {

// The local write paths of `plan`: with write = "host", the whole workspace (the VM has nothing
// else of this machine's to write to).
std::vector<std::string> local_writes(const Plan& plan) {
  if (plan.policy.filesystem.write_host) return {plan.workspace.string()};
  return plan.policy.filesystem.write;
}

// The workspace and stdin copied in, the write paths handed to the user; notes say what.
void copy_in(const Plan& plan, const Settings& s, const ServiceProof& proof, const Envd& envd,
             const std::string& ws, RunResult& r) {
  const std::string local_ws = plan.workspace.string();
  std::optional<std::string> archive;
  if (s.upload) {
    struct stat st {};
    ::stat(local_ws.c_str(), &st);
    Upload up =
        make_upload({local_ws, ws, excluded_paths(plan), plan.policy.filesystem.blocked, st.st_uid,
                     st.st_gid, static_cast<std::uint64_t>(s.upload_limit_mb) << 20});
    envd.upload(kArchive, up.archive, "root");
    archive = kArchive;
    r.notes.push_back("copied " + std::to_string(up.files) + " files (" + std::to_string(up.bytes) +
                      " bytes) of the workspace into the sandbox");
    for (const auto& skipped : up.skipped) r.notes.push_back("not copied: " + skipped);
  }
  if (plan.stdin_data) envd.upload(kStdinFile, *plan.stdin_data, s.user);
  std::vector<std::string> writes;
  for (const auto& w : local_writes(plan)) writes.push_back(remote_path(w, local_ws, ws));
  Collected prep = envd.run(prepare_spec(ws, archive, proof.uid, writes), kHelperLimit);
  if (prep.outcome.error) throw *prep.outcome.error;
  if (!prep.outcome.end || prep.outcome.end->exit_code != 0)
    throw Error(code::kIsolationFailed, "preparing the sandbox failed: " + prep.err.substr(0, 2000),
                "check backends.e2b.workspace and the template's tar");
}

// The files the run wrote under the write paths, put in place here.
void copy_back(const Plan& plan, const Settings& s, const Envd& envd, const std::string& ws,
               RunResult& r) {
  const std::string local_ws = plan.workspace.string();
  std::vector<std::string> writes = local_writes(plan), remote;
  for (const auto& w : writes) remote.push_back(remote_path(w, local_ws, ws));
  Collected c = envd.run(download_spec(remote), kHelperLimit);
  if (c.outcome.error || c.out.size() > (static_cast<std::uint64_t>(s.upload_limit_mb) << 20)) {
    r.notes.push_back("nothing copied back: " + (c.outcome.error
                                                     ? std::string(c.outcome.error->what())
                                                     : "more than upload_limit_mb"));
    return;
  }
  std::vector<std::filesystem::path> blocked;
  for (const auto& p : excluded_paths(plan)) blocked.emplace_back(p);
  std::vector<TarFile> files;
  try {
    files = sdk::read_tar(c.out);
  } catch (const std::runtime_error& e) {
    r.notes.push_back(std::string("nothing copied back: the sandbox's archive is broken (") +
                      e.what() + ")");
    return;
  }
  Downloaded d = apply_download(files, {local_ws, ws, writes, blocked});
  r.notes.push_back("copied back " + std::to_string(d.files) + " files (" +
                    std::to_string(d.bytes) + " bytes) the run wrote");
  for (const auto& skipped : d.skipped) r.notes.push_back("not copied back: " + skipped);
}

}  // namespace

RunResult E2bBackend::do_run(const Plan& plan, OutputSink& sink) {
  check_text(plan);
  Settings s = settings_of(plan.settings);
  const ServiceProof& proof = proof_for(s);
  std::string key = api_key(s);
  Api api(s, key);
  bool pooled = false;
  Sandbox sb = pool_.take(s, key, plan.policy.network.allow, pooled);
  KillAfter kill_after{api, sb.id};
  Envd envd(s, sb);
  RunResult r;
  const std::string ws = s.workspace.value_or(plan.workspace.string());
  try {
    copy_in(plan, s, proof, envd, ws, r);
  } catch (const Error& e) {
    if (auto cache = cache_for(s); cache && std::string(e.code()) == code::kIsolationFailed)
      cache->drop();  // the template may have changed since the probe: the next one is fresh
    throw;
  }

  StartSpec spec = run_spec(run_script(plan, s, ws));
  if (plan.deadline)
    spec.lifetime = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::max(*plan.deadline - std::chrono::steady_clock::now(),
                 std::chrono::steady_clock::duration::zero()) +
        kBackstop);
  ProcessStream stream(envd, spec, std::string(kReady));
  sdk::Pump pump(sink);
  pump.output(Stream::out, stream.out_fd());
  pump.output(Stream::err, stream.err_fd());
  Renewer renewer(api, sb.id, s.lease, log());
  bool killed = false, sandbox_gone = false;
  sdk::PumpControl control;
  control.deadline = plan.deadline;
  control.stop = plan.stop;
  // Killing keeps the sandbox when every process of the run can be killed inside it (the user is
  // not root) and the files are wanted back; otherwise the sandbox goes, and all in it.
  control.kill = [&] {
    killed = true;
    if (s.download && proof.uid != "0") {
      Collected k = envd.run(kill_all_spec(s.user), std::chrono::seconds(10));
      if (!k.outcome.error && stream.wait_ended(std::chrono::seconds(5))) return;
    }
    stream.abandon();
    sandbox_gone = api.kill(sb.id);
  };
  control.terminate = [&] {
    long pid = stream.pid();
    if (pid <= 0) return control.kill();
    envd.run(terminate_spec(pid, s.user), std::chrono::seconds(10));
  };
  sdk::PumpEnd end = pump.run(control);
  Outcome o = stream.finish();
  r.timed_out = end.timed_out;
  if (killed) {
    r.signal = 9;
  } else if (!stream.ready()) {
    r.error = o.error.value_or(Error(
        code::kIsolationFailed,
        "the run could not be set up in the sandbox: " + stream.setup_output().substr(0, 2000)));
  } else if (o.error) {
    r.error = o.error;
  } else if (o.end) {
    r.signal = o.end->exited ? 0 : signal_of_status(o.end->status);
    r.exit_code = o.end->exited ? o.end->exit_code : -1;
  }
  if (s.download && !sandbox_gone && stream.ready()) copy_back(plan, s, envd, ws, r);
  if (auto cache = cache_for(s)) cache->drop_after_failed_setup(r);
  for (const auto& req : plan.requirements)
    r.report.push_back({req.id, proof.result.evidence(req.id)});
  r.notes.push_back("ran in E2B sandbox " + sb.id + " (template '" + s.template_id + "'" +
                    (pooled ? ", from the pool" : "") + "), killed after the run");
  return r;
}

GarbageReport E2bBackend::do_collect_garbage(const boost::json::object& settings) {
  Settings s = settings_of(settings);
  Api api(s, api_key(s));
  auto mine = own_metadata();
  GarbageReport report;
  for (const auto& sb : api.list({{"cordon.machine", mine["cordon.machine"]}})) {
    if (!orphaned(sb.metadata)) continue;
    auto pid = sb.metadata.count("cordon.pid") ? sb.metadata.at("cordon.pid") : "?";
    if (api.kill(sb.id))
      report.removed.push_back("sandbox " + sb.id + " (cordon pid " + pid + " is gone)");
  }
  return report;
}

}  // namespace cordon::e2b
