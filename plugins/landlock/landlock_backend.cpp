// One run, stage by stage: resolve the host paths, choose the identity, plan the tree, the
// ruleset, the limits and the filter (while the keeper makes the namespaces and the tree);
// start the command; supervise; report.
#include "landlock_backend.hpp"

#include <cordon/sdk/capabilities.hpp>
#include <cordon/sdk/child.hpp>
#include <cordon/sdk/log.hpp>
#include <cordon/sdk/state_roots.hpp>

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <utility>

#include <cordon/sdk/cgroup.hpp>
#include "applet_cache.hpp"
#include "flat_layout.hpp"
#include "host_masks.hpp"
#include "host_paths.hpp"
#include "idmap.hpp"
#include "keeper.hpp"
#include "layout.hpp"
#include "limits.hpp"
#include "namespaces.hpp"
#include "probe_cache.hpp"
#include "report.hpp"
#include "ruleset.hpp"
#include "run_identity.hpp"
#include "run_outcome.hpp"
#include "settings.hpp"
#include "spawn.hpp"
#include "supervise.hpp"

namespace cordon::landlock {

namespace {

bool ports_mode(const Network& net) {
  return !net.allow && (!net.connect_ports.empty() || !net.bind_ports.empty());
}

// The environment: exactly the granted variables, and HOME.
std::vector<std::string> environment(const Plan& plan, const Layout& layout) {
  std::vector<std::string> env;
  for (const auto& [key, value] : plan.env)
    if (key != "HOME") env.push_back(key + "=" + value);
  env.push_back("HOME=" + layout.home);
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

LandlockBackend::LandlockBackend(BackendContext context) : Backend(std::move(context)) {}

std::unique_ptr<Backend> make_backend(const BackendContext& context) {
  return std::make_unique<LandlockBackend>(context);
}

ProbeResult LandlockBackend::do_probe() {
  cache_ = open_probe_cache(context().state_dir);
  std::chrono::system_clock::time_point proven_at;
  std::string settings;
  auto cached =
      cache_ ? load_probe_cache(*cache_, &proven_at, &settings) : std::optional<ProbeFacts>();
  if (cached) cached_settings_ = settings;
  facts_ = cached ? *cached : gather_probe_facts(build_filter({}));
  // The applets are kept where the probe is, and not at all when it is not (probe_cache.hpp).
  applets_ = cached_applets(cache_ ? context().state_dir : std::filesystem::path());
  ProbeResult result = probe_result(facts_);
  if (cached) {
    auto age = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now() -
                                                                proven_at);
    result.facts.push_back(
        "probe proven " + std::to_string(age.count()) +
        " s ago by an earlier cordon process on this boot, under the same kernel settings (kept "
        "up to " +
        std::to_string(std::chrono::duration_cast<std::chrono::minutes>(cache_->ttl()).count()) +
        " min; CORDON_PROBE_CACHE=off probes every time)");
  } else if (cache_ && result.available && facts_.failure.empty()) {
    store_probe_cache(*cache_, facts_, kernel_settings());
  }
  for (const auto& line : result.facts) cordon::log::debug(log(), "landlock probe: " + line);
  return result;
}

std::vector<Error> LandlockBackend::do_validate_settings(const boost::json::object& settings) {
  return landlock::validate_settings(settings);
}

// The check is made once per process; a change drops the entry, so the next process probes.
void LandlockBackend::check_cached_settings(RunResult& result) noexcept {
  if (!cached_settings_ || !cache_ || settings_checked_.exchange(true)) return;
  try {
    if (kernel_settings() == *cached_settings_) return;
    cache_->drop();
    result.notes.push_back(
        "the kernel's namespace or seccomp settings changed since the cached probe; the next "
        "cordon process probes afresh");
  } catch (const std::exception&) {
    cache_->drop();
  }
}

RunPreview LandlockBackend::do_preview(const Plan& plan) { return preview_run(plan); }

// Caught here rather than in the base: the notes gathered before the failure are kept, and an
// isolation failure drops the probe cache.
RunResult LandlockBackend::do_run(const Plan& plan, OutputSink& sink) {
  RunResult result;
  try {
    execute(plan, sink, result);
  } catch (const Error& e) {
    result.error = e;
  }
  // The host may have changed since the probe: the next process proves it afresh.
  if (cache_) cache_->drop_after_failed_setup(result);
  return result;
}

namespace {

// Everything decided before the clone.
struct Prepared {
  HostView view;
  Identity identity;
  Layout layout;
  RulesetPlan rules;
  LimitsPlan limits;
  bool ports = false;
};

Prepared prepare(const Plan& given, const ProbeFacts& facts, const MulticallLookup& applets_of,
                 RunResult& result) {
  Prepared p;
  p.identity = identity_for(given, parse_settings(given.settings), result.notes);
  std::optional<Plan> rehomed = for_command_user(given, p.identity, result.notes);
  const auto& kept = rehomed ? rehomed->protected_paths : given.protected_paths;
  if (auto more = command_user_state_beyond(p.identity.uid, kept); !more.empty()) {
    if (!rehomed) rehomed = given;
    for (auto& dir : more) rehomed->protected_paths.push_back(std::move(dir));
  }
  const Plan& plan = rehomed ? *rehomed : given;
  const Policy& policy = plan.policy;
  SandboxUser user{p.identity.uid, {}};
  // As root the sandbox runs with its one group; unprivileged, with cordon's groups.
  if (p.identity.parent_writes_maps) user.gids = {p.identity.gid};
  p.view = gather_host_view(plan, user, applets_of);
  LayoutOptions options;
  options.home_private = policy.filesystem.home == HomeMode::private_home;
  // Half the memory total: a command filling /tmp or HOME gets ENOSPC, not the OOM killer.
  if (policy.limits.memory_mb) options.tmpfs_bytes = (*policy.limits.memory_mb << 20) / 2;
  p.layout = plan_layout(p.view, options);
  p.ports = ports_mode(policy.network);
  const int abi = landlock_abi();
  if (p.ports && abi < 6 && requires_capability(plan.requirements, cap::ipc_isolate))
    throw Error(code::kUnproven,
                "the landlock backend does not prove every requirement:\n  ipc.isolate "
                "(network.connect_ports/bind_ports): with TCP ports the host's network is kept, "
                "and its abstract unix sockets are scoped only by Landlock ABI 6 (this kernel: " +
                    std::to_string(abi) + ")",
                "drop the port lists (a fresh network namespace isolates abstract sockets), or "
                "run on a kernel with Landlock ABI 6");
  // The ABI the kernel reports now, never a cached one (probe_cache.hpp).
  p.rules =
      plan_ruleset(abi, p.view, p.layout, policy.network, !policy.process.allowed_commands.empty());
  p.limits = plan_limits(policy.limits, {facts.cgroups, facts.nproc_per_userns, !facts.root});
  return p;
}

// The memory the sandbox's processes read after the clone; it outlives them.
struct ChildData {
  std::vector<std::string> env, args, candidates;
  std::vector<char*> envp, argv;

  ChildData(const Plan& plan, const Prepared& p)
      : env(environment(plan, p.layout)),
        args(plan.argv),
        candidates(sdk::exec_candidates(plan.argv.front(), plan.env.count("PATH")
                                                               ? plan.env.at("PATH")
                                                               : std::string("/usr/bin:/bin"))),
        envp(pointers(env)),
        argv(pointers(args)) {}
};

// The pipes of one run: cordon's ends and the sandbox's.
struct Pipes {
  Pipe out = make_pipe(), err = make_pipe(), report = make_pipe(), input;

  explicit Pipes(bool has_input) {
    if (has_input)
      input = make_pipe();
    else
      input.read.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (!input.read) throw Error(code::kIsolationFailed, "cannot open /dev/null");
  }
};

ChildSpec make_spec(const Prepared& p, const ChildData& d, const Pipes& pipes, int ruleset_fd,
                    const SeccompProgram& program, const sdk::SandboxCgroup* cgroup,
                    const Keeper& keeper) {
  ChildSpec spec;
  for (int i = 0; i < keeper.ns_count; ++i) {
    auto k = static_cast<std::size_t>(i);
    if (keeper.ns_types[k] == CLONE_NEWNS) {  // joined later, once the keeper has switched root
      spec.mnt_ns_fd = keeper.ns[k].get();
    } else if (spec.ns_count < kJoinedNamespaces) {
      spec.ns_fds[spec.ns_count] = keeper.ns[k].get();
      spec.ns_types[spec.ns_count++] = keeper.ns_types[k];
    }
  }
  if (cgroup && cgroup->clone_fd() < 0)
    for (int i = 0; i < 3; ++i) spec.cgroup_tasks[i] = cgroup->task_fds()[i];
  spec.uid = p.identity.uid;
  spec.gid = p.identity.gid;
  spec.drop_groups = p.identity.parent_writes_maps;
  spec.keeper_socket = keeper.socket.get();
  spec.tree_sealed = !keeper.tree.empty();
  spec.filter = &program;
  spec.filter_in_entrant = !program.no_subprocess;
  spec.workspace = p.layout.workspace.c_str();
  spec.ruleset_fd = ruleset_fd;
  spec.ruleset = &p.rules;
  spec.rlimits = &p.limits.rlimits;
  spec.argv = d.argv.data();
  spec.envp = d.envp.data();
  spec.candidates = &d.candidates;
  spec.stdin_fd = pipes.input.read.get();
  spec.stdout_fd = pipes.out.write.get();
  spec.stderr_fd = pipes.err.write.get();
  spec.report_fd = pipes.report.write.get();
  spec.report_peer_fd = pipes.report.read.get();
  return spec;
}

// Owns the keeper until the command's process takes it over.
struct KeeperGuard {
  Keeper keeper;
  ~KeeperGuard() { discard_keeper(keeper); }
};

// Tells the shelf when the run is over: the next keeper is made then, not beside the command.
struct ShelfTurn {
  KeeperShelf& shelf;
  bool network;
  ~ShelfTurn() { shelf.done(network); }
};

// Kills and reaps whatever of the sandbox is still there when the run is left early.
struct StartedGuard {
  Started& started;
  ~StartedGuard() { abandon(started); }
};

}  // namespace

void LandlockBackend::execute(const Plan& plan, OutputSink& sink, RunResult& result) {
  if (!probe().available) throw Error(code::kBackendUnavailable, probe().reason);
  if (auto unwaitable = sdk::children_not_waitable()) throw *unwaitable;
  bool fresh_net = !plan.policy.network.allow && !ports_mode(plan.policy.network);
  ShelfTurn turn{keepers_, fresh_net};  // left last: after every keeper of the run is gone
  // Started first, so that the namespaces are made while the run is planned.
  // (Once runs repeat, the shelf has one ready, its tree built if the run's is the last one's.)
  KeeperGuard guard{take_prestarted_keeper(fresh_net)};
  const bool shelved = !guard.keeper;
  if (shelved && !keepers_.warm(fresh_net)) guard.keeper = start_keeper(fresh_net);
  Prepared p = prepare(plan, facts_, applets_, result);
  ChildData data(plan, p);
  if (shelved) {
    const KeeperShelf::Order order{p.layout, p.identity,
                                   tree_key(p.layout, p.identity.uid, p.identity.gid)};
    Keeper ready = keepers_.take(fresh_net, &order);
    if (guard.keeper)
      discard_keeper(ready);  // started early, before runs repeated
    else
      guard.keeper = std::exchange(ready, Keeper{});
    if (!guard.keeper) guard.keeper = start_keeper(fresh_net);
  }
  if (auto failed = await_keeper(guard.keeper)) throw setup_error(*failed, p.identity);
  // The keeper builds the tree while the rest is made here (unless it was prepared ahead).
  if (guard.keeper.tree.empty()) {
    write_keeper_maps(guard.keeper, p.identity);
    request_tree(guard.keeper, p.layout, p.identity);
  }
  const SeccompProgram program = build_filter({!plan.policy.process.allow_subprocess, p.ports});
  std::unique_ptr<sdk::SandboxCgroup> cgroup;
  if (!p.limits.cgroup.empty())
    cgroup = std::make_unique<sdk::SandboxCgroup>(facts_.cgroups, p.limits.cgroup);
  Pipes pipes(plan.stdin_data.has_value());
  UniqueFd ruleset = create_ruleset(p.rules);
  ChildSpec spec = make_spec(p, data, pipes, ruleset.get(), program, cgroup.get(), guard.keeper);
  // Before the start: made after it, it let the command's process come sooner only to poll
  // longer for the keeper's tree (+0.3 ms of CPU per run, measured).
  result.report =
      enforcement_report({plan, p.view, p.layout, p.rules, p.limits, p.identity, fresh_net});
  if (plan.deadline && std::chrono::steady_clock::now() >= *plan.deadline) {
    result.timed_out = true;
    result.notes.push_back("the deadline passed during the set-up: the command did not run");
    for (auto& note : p.view.notes) result.notes.push_back(note);
    return;
  }
  // The entrant joins the namespaces and loads the filter, the command's process sets itself up
  // while the keeper finishes the tree, and waits for it; this returns once it has executed.
  Started started = start_command(spec, cgroup ? cgroup->clone_fd() : -1, guard.keeper);
  StartedGuard started_guard{started};
  check_cached_settings(result);  // while the command runs
  for (auto* end : {&pipes.out.write, &pipes.err.write, &pipes.report.write, &pipes.input.read})
    end->reset();
  ParentEnds ends{std::move(pipes.out.read), std::move(pipes.err.read),
                  std::move(pipes.report.read), std::move(pipes.input.write)};
  Outcome outcome = supervise(started, ends, plan.stdin_data, plan.stop, plan.deadline, sink);
  // While the keeper's namespaces are torn down: the group is read, and removed if the last
  // orphan has already left it (else when it is destroyed, after the keeper is reaped).
  Totals totals = totals_of(cgroup.get());
  if (cgroup && cgroup->remove_if_empty()) cgroup.reset();
  reap_keeper(started, outcome);
  fill_outcome(
      outcome, plan, p.identity, totals,
      [&](const std::string& path) {
        return masked_for(path, p.view, plan.policy.process.blocked_commands, applets_);
      },
      result);
  for (auto& note : p.view.notes) result.notes.push_back(note);
}

}  // namespace cordon::landlock
