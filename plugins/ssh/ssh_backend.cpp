// The ssh backend: settings -> target, the target's proof (cached), one channel per run over a
// pooled connection.
#include "ssh_backend.hpp"

#include <pwd.h>
#include <signal.h>
#include <unistd.h>
#include <cordon/sdk/error.hpp>

#include <cmath>
#include <cstdlib>

#include "channel_run.hpp"
#include "remote_cordon.hpp"
#include "remote_line.hpp"
#include "remote_server.hpp"
#include "sftp_files.hpp"

namespace cordon::ssh {

namespace {

std::pair<std::string, std::string> local_user() {
  std::string name = "root", home = "/root";
  if (const passwd* pw = ::getpwuid(::geteuid())) {
    name = pw->pw_name;
    home = pw->pw_dir;
  }
  if (const char* h = std::getenv("HOME"); h && *h == '/') home = h;
  return {name, home};
}

RemoteRun remote_run(const Plan& plan, const Target& t) {
  RemoteRun r;
  r.workspace = t.workspace.value_or(plan.workspace.string());
  r.env = plan.env;
  const Limits& l = plan.policy.limits;
  if (l.max_open_files) r.ulimits.push_back({'n', *l.max_open_files});
  if (l.cpu_seconds) r.ulimits.push_back({'t', *l.cpu_seconds});
  if (l.max_file_size_mb) r.ulimits.push_back({'f', *l.max_file_size_mb * 2048});  // 512 B blocks
  if (plan.deadline) {
    auto left = std::chrono::duration<double>(*plan.deadline - std::chrono::steady_clock::now());
    r.backstop_seconds = static_cast<std::uint64_t>(std::ceil(std::max(0.0, left.count()))) + 5;
  }
  r.argv = plan.argv;
  return r;
}

// The run's channel, on a pooled connection; a pooled one that fails to open a channel (the
// server closed it while idle) is replaced once by a fresh one.
std::pair<std::unique_ptr<Connection>, std::unique_ptr<Channel>> open(Pool& pool, const Target& t,
                                                                      const std::string& line) {
  auto conn = pool.take(t);
  try {
    auto ch = conn->exec(line);
    return {std::move(conn), std::move(ch)};
  } catch (const Error&) {
    conn = std::make_unique<Connection>(t);
    auto ch = conn->exec(line);
    return {std::move(conn), std::move(ch)};
  }
}

// How long past the deadline a remote cordon has to report its own timeout before this side
// kills it.
constexpr auto kRemoteGrace = std::chrono::seconds(5);

// How long a host whose connection or probe failed is taken as failed before it is tried again.
constexpr auto kRetryAfter = std::chrono::seconds(30);

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

std::vector<Target> SshBackend::targets(const boost::json::object& settings) const {
  auto [name, home] = local_user();
  return targets_of(settings, name, home);
}

HostProof SshBackend::proof_for(const Target& t) {
  const auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(mutex_);
    if (auto it = proofs_.find(t.key()); it != proofs_.end()) return it->second;
    // A host that just failed is not dialled again at once: a fleet's every run would wait
    // out its connect_timeout.
    if (auto it = failed_.find(t.key()); it != failed_.end() && now < it->second.first)
      throw it->second.second;
  }
  std::unique_ptr<Connection> conn;
  HostProof proof;
  try {
    conn = pool_.take(t);
    proof = probe_host(*conn);
  } catch (const Error& e) {
    std::lock_guard lock(mutex_);
    failed_.insert_or_assign(t.key(), std::pair{now + kRetryAfter, e});
    throw;
  }
  pool_.give(std::move(conn));
  std::lock_guard lock(mutex_);
  return proofs_.emplace(t.key(), std::move(proof)).first->second;
}

ProbeResult SshBackend::do_probe() {
  ProbeResult r;
  r.available = false;
  r.reason = "no remote host configured: set host and identity under [backends.ssh]";
  return r;
}

ProbeResult SshBackend::do_probe_for(const boost::json::object& settings) {
  if (settings.empty()) return do_probe();
  auto ts = targets(settings);
  if (ts.size() > 1) return fleet_probe(ts);
  return proof_for(ts.front()).result;
}

std::vector<Error> SshBackend::do_validate_settings(const boost::json::object& settings) {
  if (settings.empty()) return {};  // probe() says what is missing
  return validate(settings);
}

namespace {

// What a run under a remote cordon gives: the remote's own result when it came, else what this
// side saw — the signal it ended by and whether this side's deadline passed — and, unless this
// side killed it, an error quoting the remote cordon's diagnostics.
RunResult cordon_result(const std::optional<boost::json::object>& result,
                        const std::string& diagnostics, const Target& t, const std::string& cordon,
                        int signal, bool timed_out, bool killed_here) {
  RunResult r;
  if (result) {
    merge_result(*result, t.name(), r);
    return r;
  }
  r.signal = signal;
  r.timed_out = timed_out;
  if (!killed_here)
    r.error = Error(
        code::kBackendFault,
        "the remote cordon on " + t.name() + " ended without a result" +
            (diagnostics.empty() ? std::string() : ": " + trimmed(diagnostics).substr(0, 2000)),
        "run '" + cordon + " run -- true' on that host to see what fails");
  return r;
}

}  // namespace

RunResult SshBackend::run_served(const Plan& plan, const Target& t, const std::string& cordon,
                                 OutputSink& sink) {
  std::string request = request_json(plan, t.workspace.value_or(plan.workspace.string()));
  auto conn = pool_.take(t);
  if (!conn->server) try {  // an idle pooled connection the host has closed: a fresh one, once
      conn->server = conn->exec(serve_line(cordon));
    } catch (const Error&) {
      conn = std::make_unique<Connection>(t);
    }
  Served s = serve_run(*conn, cordon, request, plan, kRemoteGrace, sink);
  bool killed_here =
      s.killed || s.timed_out || (plan.stop && plan.stop->requested() == StopToken::Level::kill);
  RunResult r = cordon_result(s.result, s.diagnostics, t, cordon, killed_here ? SIGKILL : 0,
                              s.timed_out, killed_here);
  r.notes.push_back("ran on " + t.name() + " (host key " + conn->fingerprint() +
                    ") under the remote cordon " + cordon + " (serving)");
  pool_.give(std::move(conn));
  return r;
}

RunResult SshBackend::run_under_cordon(const Plan& plan, const Target& t, const std::string& cordon,
                                       OutputSink& sink) {
  Plan sent = plan;
  sent.stdin_data = request_json(plan, t.workspace.value_or(plan.workspace.string()));
  if (plan.deadline) sent.deadline = *plan.deadline + kRemoteGrace;
  FramedChannelSink framed(sink);
  auto [conn, channel] = open(pool_, t, cordon_line(cordon));
  ChannelEnd end = run_channel(*conn, *channel, sent, framed);
  channel.reset();
  RunResult r = cordon_result(framed.result(), framed.diagnostics(), t, cordon, end.signal,
                              end.pump.timed_out, end.pump.killed);
  r.notes.push_back("ran on " + t.name() + " (host key " + conn->fingerprint() +
                    ") under the remote cordon " + cordon);
  if (!end.dropped) pool_.give(std::move(conn));
  return r;
}

std::unique_ptr<WorkspaceFiles> SshBackend::do_open_workspace(const boost::json::object& settings,
                                                              const std::filesystem::path& root,
                                                              const WorkspaceRules& rules) {
  auto ts = targets(settings);
  if (ts.size() != 1)
    throw Error(code::kBadArgument, "the workspace file API works on one host, not a fleet",
                "give a configuration whose [backends.ssh] names one host");
  std::string dir = root.empty() ? ts.front().workspace.value_or("") : root.string();
  if (dir.empty())
    throw Error(code::kBadArgument, "no remote workspace is named",
                "give --workspace, or set backends.ssh.workspace");
  return std::make_unique<SftpFiles>(pool_.take(ts.front()), dir, rules);
}

RunResult SshBackend::do_run(const Plan& plan, OutputSink& sink) {
  auto ts = targets(plan.settings);
  if (ts.size() > 1) return fleet_run(plan, ts, sink);
  return run_on(plan, ts.front(), proof_for(ts.front()), sink);
}

RunResult SshBackend::run_on(const Plan& plan, const Target& t, const HostProof& proof,
                             OutputSink& sink) {
  if (proof.cordon && proof.serve) return run_served(plan, t, *proof.cordon, sink);
  if (proof.cordon) return run_under_cordon(plan, t, *proof.cordon, sink);
  std::string line = remote_line(remote_run(plan, t), proof.wrappers);
  auto [conn, channel] = open(pool_, t, line);
  ChannelEnd end = run_channel(*conn, *channel, plan, sink);
  channel.reset();
  RunResult r;
  r.exit_code = end.status.value_or(-1);
  r.signal = end.signal;
  r.timed_out = end.pump.timed_out;
  if (!end.pid && end.status == kSetupFailed)
    r.error = Error(code::kIsolationFailed,
                    "the run could not be set up on " + t.name() + ": " + trimmed(end.setup_error),
                    "check backends.ssh.workspace and the remote account's limits");
  else if (!end.pid && !end.pump.killed)
    r.error = Error(code::kServiceUnreachable,
                    t.name() + " ended the channel before the command started");
  // Without a pid namespace the process group is what is left to end.
  if (end.pid > 0 && !proof.wrappers.pid_namespace && !end.dropped) try {
      conn->capture(kill_line(end.pid, "KILL"), 5);
    } catch (const Error&) {
      end.dropped = true;
    }
  for (const auto& req : plan.requirements)
    r.report.push_back({req.id, proof.result.evidence(req.id)});
  r.notes.push_back("ran on " + t.name() + " (host key " + conn->fingerprint() + ")");
  if (!end.dropped) pool_.give(std::move(conn));
  return r;
}

}  // namespace cordon::ssh
