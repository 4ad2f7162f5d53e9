// One run, stage by stage: the daemon, stale containers, the image, the host facts, the spec;
// create, attach, wait, start, stream; the outcome; removal.
#include "docker_backend.hpp"

#include <boost/json/array.hpp>
#include <boost/json/parse.hpp>

#include <optional>

#include <cordon/registry.hpp>
#include <cordon/sdk/log.hpp>

#include <signal.h>
#include <unistd.h>

#include "attached_run.hpp"
#include "container.hpp"
#include "container_spec.hpp"
#include "host_side.hpp"
#include "image_user.hpp"
#include "mount_identity.hpp"
#include "report.hpp"
#include "seccomp_profile.hpp"
#include "session.hpp"
#include "settings.hpp"
#include "verified_file.hpp"
#include "waiter_blob.hpp"

namespace cordon::docker {

namespace json = boost::json;

namespace {

struct ImageInfo {
  std::string id;
  std::vector<std::string> env;  ///< the image's own ENV
};

// The image's id and ENV, after checking it is present (CRD1002 when not: cordon never pulls).
ImageInfo inspect_image(const Daemon& daemon, const std::string& image) {
  Response r = daemon.call("GET", "/images/" + image + "/json");
  if (r.status == 404)
    throw Error(
        code::kBackendResource,
        "image '" + image + "' is not on the docker daemon at " + daemon.endpoint().display(),
        "run 'docker pull " + image + "' (cordon never pulls), or build it locally");
  if (r.status != 200)
    throw Error(code::kServiceUnreachable,
                "cannot inspect image '" + image + "': " + daemon_message(r));
  ImageInfo info;
  json::error_code ec;
  auto parsed = json::parse(r.body, ec);
  if (ec || !parsed.is_object()) return info;
  if (const auto* id = parsed.as_object().if_contains("Id"); id && id->is_string())
    info.id = std::string(id->as_string());
  const auto* config = parsed.as_object().if_contains("Config");
  if (!config || !config->is_object()) return info;
  if (const auto* e = config->as_object().if_contains("Env"); e && e->is_array())
    for (const auto& kv : e->as_array())
      if (kv.is_string()) info.env.emplace_back(kv.as_string());
  return info;
}

// The daemon's architecture, as /version says it ("amd64").
std::string daemon_arch(const Daemon& daemon) {
  const auto* arch = daemon.version_info().if_contains("Arch");
  return arch && arch->is_string() ? std::string(arch->get_string()) : std::string("unknown");
}

void check_runtime(const Daemon& daemon, const std::string& runtime) {
  if (runtime.empty()) return;
  auto info = daemon.json("GET", "/info", code::kServiceUnreachable, "info");
  const auto* rt = info.if_contains("Runtimes");
  if (rt && rt->is_object() && rt->as_object().contains(runtime)) return;
  throw Error(code::kBackendResource,
              "runtime '" + runtime + "' is not known to the docker daemon at " +
                  daemon.endpoint().display(),
              "install it and register it in the daemon's configuration, or remove "
              "backends.docker.runtime");
}

// The host side of a run: every bind source opened once, without following links, and held
// for the whole run (the waiter compares the container's mounts with these descriptors'
// identities before the command runs; the daemon resolves the paths again at start), and
// cordon's own state as it must be hidden.
struct HostSide {
  SourceIdentities held;
  std::vector<HostMount> mounts;  ///< the host mounts and the pins of the masked paths
  std::vector<BlockedPath> blocked;
  std::vector<BlockedPath> own;
};

HostSide hold_host_side(const Plan& plan, const Settings& settings, const Masks& masks,
                        const SourceIdentity& waiter, std::optional<uid_t> named_uid,
                        std::vector<std::string>& notes) {
  HostSide h;
  h.held = {{masks.file.host_path, masks.file},
            {masks.dir.host_path, masks.dir},
            {waiter.host_path, waiter}};
  std::string ws = plan.workspace.string();
  h.held.emplace(ws, source_identity({ws, "workspace"}));
  h.mounts = host_mounts(plan, settings, existing_write_paths(plan, notes, h.held));
  const Plan guarded = with_command_user_state(plan, settings, h.held.at(ws), named_uid);
  h.own = own_state(guarded);
  refuse_mounts_of_own_state(h.mounts, paths_of(h.own));
  refuse_missing_state(guarded, h.mounts);
  h.blocked = blocked_paths(plan, notes);
  // The pins' sources are held and checked in the container like every other mount's.
  std::vector<BlockedPath> masked = h.blocked;
  masked.insert(masked.end(), h.own.begin(), h.own.end());
  for (auto& pin : pins_for(h.mounts, masked)) h.mounts.push_back(std::move(pin));
  identify_sources(
      sources_to_identify(h.mounts, masks.file.host_path, masks.dir.host_path, waiter.host_path),
      h.held);
  return h;
}

// The outcome of a run given up before its output was streamed: the command did not run, or
// was killed as soon as it started, and the container is gone.
void abandoned(const Plan& plan, RunResult& result) {
  auto level = plan.stop ? plan.stop->requested() : StopToken::Level::none;
  result.signal = level == StopToken::Level::terminate ? SIGTERM : SIGKILL;
  if (level == StopToken::Level::none) {
    result.timed_out = true;
    result.notes.push_back(
        "the deadline passed while the container was being made: it was removed");
  } else {
    result.notes.push_back("stopped while the container was being made: it was removed");
  }
}

}  // namespace

DockerBackend::DockerBackend(BackendContext context) : Backend(std::move(context)) {}

ProbeResult DockerBackend::do_probe() {
  Endpoint ep = resolve_endpoint("", "");
  {
    std::lock_guard lock(mutex_);
    probed_key_ = ep.key();
  }
  auto r = probe_result(gather_probe_facts(ep));
  for (const auto& line : r.facts) cordon::log::debug(log(), "docker probe: " + line);
  return r;
}

std::vector<Error> DockerBackend::do_validate_settings(const json::object& settings) {
  return docker::validate_settings(settings);
}

// Caught here rather than in the base: a cancelled run is wound up, and the notes gathered
// before a failure are kept.
RunResult DockerBackend::do_run(const Plan& plan, OutputSink& sink) {
  RunResult result;
  try {
    execute(plan, sink, result);
  } catch (const Cancelled&) {
    abandoned(plan, result);
  } catch (const Error& e) {
    result.error = e;
  }
  return result;
}

namespace {

// A named daemon's probe words its refusals itself, naming the daemon.
ProbeResult named_probe(const ProbeFacts& facts, const Endpoint& ep) {
  ProbeResult r = probe_result(facts);
  std::string where = "the docker daemon at " + ep.display() + " (named by backends.docker)";
  if (!r.available)
    r.unusable = facts.error
                     ? *facts.error
                     : Error(code::kBackendUnavailable, where + " cannot be used: " + r.reason);
  for (auto& proof : r.proofs)
    if (!proof.proven) proof.evidence = where + ": " + proof.evidence;
  return r;
}

}  // namespace

ProbeResult DockerBackend::do_probe_for(const json::object& settings) {
  Settings s = parse_settings(settings);
  Endpoint ep = resolve_endpoint(s.socket, s.host);
  std::string key = ep.key();
  bool probed = false;  // the daemon probe() asked
  {
    std::lock_guard lock(mutex_);
    if (auto it = probes_.find(key); it != probes_.end()) return it->second;
    probed = key == probed_key_;
  }
  if (probed) return probe();
  ProbeResult r = named_probe(gather_probe_facts(ep), ep);
  for (const auto& line : r.facts) cordon::log::debug(log(), "docker probe: " + line);
  if (r.available) {
    std::lock_guard lock(mutex_);
    probes_.emplace(key, r);
  }
  return r;
}

std::shared_ptr<const Daemon> DockerBackend::daemon_for(const Endpoint& ep) {
  std::string key = ep.key();
  {
    std::lock_guard lock(mutex_);
    if (auto it = daemons_.find(key); it != daemons_.end()) return it->second;
  }
  auto daemon = std::make_shared<const Daemon>(ep);
  bool sweep = false;
  {
    std::lock_guard lock(mutex_);
    daemons_[key] = daemon;
    sweep = !collected_[key];
    collected_[key] = true;
  }
  // Containers of a cordon that was killed mid-run go on the next run, but for a command its
  // waiter still bounds by its deadline: it may finish its work, as it would have.
  if (sweep) {
    try {
      for (const auto& line : collect_stale(*daemon, Sweep::spare_bounded))
        cordon::log::info(log(), "removed stale " + line);
    } catch (const std::exception& e) {
      cordon::log::warn(log(), std::string("could not collect stale containers: ") + e.what());
    }
  }
  return daemon;
}

GarbageReport DockerBackend::do_collect_garbage(const json::object& settings) {
  Settings s = parse_settings(settings);
  Daemon daemon(resolve_endpoint(s.socket, s.host));
  return {collect_stale(daemon), std::nullopt};
}

WarmPool& DockerBackend::pool_for(const std::shared_ptr<const Daemon>& daemon,
                                  const std::string& waiter_path) {
  std::lock_guard lock(mutex_);
  auto& pool = pools_[daemon->endpoint().key()];
  if (!pool) pool = std::make_unique<WarmPool>(daemon, waiter_path);
  return *pool;
}

MountedPrograms DockerBackend::blocked_programs(const Daemon& daemon, const PrivateDir& state,
                                                const Plan& plan, const ImageRun& image,
                                                const std::vector<HostMount>& mounts,
                                                std::vector<std::string>& image_files) {
  const auto& names = plan.policy.process.blocked_commands;
  if (names.empty()) return {};
  // The container's PATH: the granted one, else the daemon's default (the system directories,
  // which exec_candidates() always adds).
  auto path = plan.env.count("PATH") ? plan.env.at("PATH") : std::string();
  MountedPrograms mounted = mounted_programs(exec_candidates(names, path), mounts);
  MulticallScan scan = [&](const std::vector<std::string>& applets,
                           const std::vector<std::string>& dirs) {
    return multicall_programs(daemon, image.id, image.waiter_path, image.seccomp, applets, dirs);
  };
  ExecMasks m =
      exec_cache_.masks(daemon, state.subdir("exec-block"), image.id.empty() ? "unknown" : image.id,
                        names, path, scan, mounted.image_links);
  if (!m.refusal.empty())
    throw Error(code::kIsolationFailed, "process.blocked_commands cannot be enforced: " + m.refusal,
                "use an image whose blocked programs are files of their own, or remove the name "
                "from process.blocked_commands");
  check_foreign_links(mounted, m);
  settle_image_masks(mounts, m, mounted);
  for (const auto* paths : {&m.files, &m.multicall_aliases, &mounted.masks})
    mounted.masked_programs.insert(mounted.masked_programs.end(), paths->begin(), paths->end());
  image_files = std::move(m.files);
  return mounted;
}

PrivateDir DockerBackend::state_dir() const {
  std::filesystem::path dir = context().state_dir;
  if (dir.empty()) {
    auto parent = default_backend_state_dir();
    if (!parent.empty()) dir = parent / "docker";
  }
  if (dir.empty())
    throw Error(code::kIsolationFailed, "the docker backend has no state directory",
                "set XDG_RUNTIME_DIR or HOME, or give the registry a state directory");
  return PrivateDir::create(dir);
}

void DockerBackend::execute(const Plan& plan, OutputSink& sink, RunResult& result) {
  Settings settings = parse_settings(plan.settings);
  Endpoint endpoint = resolve_endpoint(settings.socket, settings.host);
  // Backend::run refused already unless this daemon's probe proved the plan (do_probe_for);
  // one that went away since gives CRD1005 here.
  auto daemon = daemon_for(endpoint);
  std::string run_id = new_run_id();
  // cordon's own files, checked before every use: the masks, and the waiter by its SHA-256.
  PrivateDir state = state_dir();
  Masks masks = ensure_masks(state);
  SourceIdentity waiter = ensure_waiter(state);
  Cancel abandon = abandon_for(plan);
  ImageInfo image = inspect_image(*daemon, settings.image);
  check_runtime(*daemon, settings.runtime);
  // A user the image names: its uid there is a host uid, whose state is hidden like any other
  // command user's; the waiter checks that it runs with that uid.
  std::optional<uid_t> named_uid;
  if (auto name = user_name_of(settings.user))
    named_uid = image_users_.uid_of(*daemon, state.subdir("image-users"), image.id, *name);
  HostSide host = hold_host_side(plan, settings, masks, waiter, named_uid, result.notes);
  std::vector<std::string> exec_masks;
  auto seccomp = seccomp_profile(daemon_arch(*daemon));
  MountedPrograms mounted = blocked_programs(
      *daemon, state, plan, {image.id, waiter.host_path, seccomp}, host.mounts, exec_masks);
  result.notes.insert(result.notes.end(), mounted.notes.begin(), mounted.notes.end());
  const Masked masked{std::move(mounted.masked_programs), plan.policy.process.blocked_commands};
  // Each stage of making the container looks at the stop request and the deadline; the
  // daemon's calls that may wait (attach, wait, start) poll them.
  if (abandon()) throw Cancelled();
  std::vector<std::string> labels = owner_labels();
  if (auto deadline = deadline_label(plan.deadline)) labels.push_back(std::move(*deadline));
  SpecInput in{plan,
               settings,
               run_id,
               container_user(settings, host.held.at(plan.workspace.string())),
               std::move(image.env),
               std::move(host.mounts),
               std::move(host.blocked),
               masks.file.host_path,
               masks.dir.host_path,
               std::move(labels),
               std::move(exec_masks),
               std::move(mounted.masks),
               seccomp,
               std::move(host.own)};
  ContainerSpec spec = make_spec(in);
  // Every container runs the command through the waiter, which checks the mounts first.
  json::object body = waiter_body(spec.body, waiter.host_path, run_id);
  std::vector<MountCheck> checks = mount_checks(body, host.held);
  bool ran = false;
  if (settings.pool) {
    WarmPool& pool = pool_for(daemon, waiter.host_path);
    // A pooled container was made from the same body but the command: the same mounts.
    if (auto pooled = pool.take(spec.body, settings.pool)) {
      ran = attach_and_run(*daemon, *pooled, true, checks, named_uid, masked, plan, sink, result);
      pool.discard(std::move(pooled));
      if (ran) result.notes.push_back("ran in a warm pool container");
    }
  }
  if (!ran) {
    Container container(*daemon, "cordon-" + run_id, body);
    if (abandon()) throw Cancelled();  // removed on the way out
    for (const auto& w : container.warnings()) result.notes.push_back("docker: " + w);
    attach_and_run(*daemon, container, false, checks, named_uid, masked, plan, sink, result);
    std::string why;
    if (!container.remove(why) && !result.error)
      result.notes.push_back("the container '" + container.id() + "' was not removed: " + why);
  }
  result.report = enforcement_report(plan, spec, in.user, daemon->version().str());
  if (!spec.removed_env.empty()) {
    std::string names;
    for (const auto& n : spec.removed_env) names += (names.empty() ? "" : ", ") + n;
    result.notes.push_back("the image's ENV (" + names + ") was not granted and was removed");
  }
}

}  // namespace cordon::docker
