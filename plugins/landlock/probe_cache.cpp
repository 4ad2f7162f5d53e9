// landlock's facts in the SDK's probe cache: their JSON form, the fingerprint extras, and what
// of a cached answer landlock believes.
#include "probe_cache.hpp"

#include <unistd.h>

#include <boost/json.hpp>

#include <cstdint>
#include <string>

#include "fd.hpp"
#include "reductions.hpp"
#include "ruleset.hpp"

namespace cordon::landlock {

namespace json = boost::json;

namespace {

// Bumped whenever ProbeFacts or what the probe proves changes meaning.
constexpr int kFactsFormat = 3;

// Only what a store keeps, and only an answer no fresh probe could better: a cached failure
// or "cannot" is probed again, never believed (it would refuse runs the host can give). The
// ABI and the caller are what they are now.
bool trustworthy(const ProbeFacts& f) {
  return f.failure.empty() && f.abi >= 1 && f.abi == landlock_abi() && f.namespaces &&
         f.fresh_proc && f.identity && f.landlock && f.seccomp && f.netns &&
         f.root == (::geteuid() == 0);
}

bool cgroups_complete(const sdk::CgroupSupport& c) {
  return c.version != sdk::CgroupVersion::none && c.memory && c.pids && c.cpu;
}

}  // namespace

std::string fingerprint_extras() {
  return "landlock facts " + std::to_string(kFactsFormat) + "\nabi " +
         std::to_string(landlock_abi()) + "\nreduced " + reductions() + "\n";
}

std::string kernel_settings() {
  std::string out;
  for (const char* sysctl :
       {"/proc/sys/kernel/unprivileged_userns_clone",
        "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
        "/proc/sys/user/max_user_namespaces", "/proc/sys/user/max_mnt_namespaces",
        "/proc/sys/user/max_pid_namespaces", "/proc/sys/user/max_net_namespaces",
        "/proc/sys/user/max_ipc_namespaces", "/proc/sys/user/max_uts_namespaces",
        "/proc/sys/user/max_cgroup_namespaces", "/proc/sys/kernel/seccomp/actions_avail"})
    // A missing file reads as "-", which no existing one of these holds.
    out += std::string(sysctl) + " " + read_text(sysctl, 256).value_or("-") + "\n";
  return out;
}

json::value encode_probe_facts(const ProbeFacts& f, const std::string& settings) {
  return json::object{{"settings", settings},
                      {"root", f.root},
                      {"abi", f.abi},
                      {"namespaces", f.namespaces},
                      {"fresh_proc", f.fresh_proc},
                      {"identity", f.identity},
                      {"landlock", f.landlock},
                      {"seccomp", f.seccomp},
                      {"nproc_per_userns", f.nproc_per_userns},
                      {"netns", f.netns},
                      {"netns_evidence", f.netns_evidence},
                      {"failure", f.failure},
                      {"cgroups", sdk::cgroup_support_json(f.cgroups)},
                      {"micros", f.micros}};
}

std::optional<ProbeFacts> decode_probe_facts(const json::value& v, std::string* settings) {
  try {
    const auto& o = v.as_object();
    ProbeFacts f;
    f.root = o.at("root").as_bool();
    f.abi = o.at("abi").to_number<int>();
    f.namespaces = o.at("namespaces").as_bool();
    f.fresh_proc = o.at("fresh_proc").as_bool();
    f.identity = o.at("identity").as_bool();
    f.landlock = o.at("landlock").as_bool();
    f.seccomp = o.at("seccomp").as_bool();
    f.nproc_per_userns = o.at("nproc_per_userns").as_bool();
    f.netns = o.at("netns").as_bool();
    f.netns_evidence = o.at("netns_evidence").as_string().c_str();
    f.failure = o.at("failure").as_string().c_str();
    auto cgroups = sdk::cgroup_support_from_json(o.at("cgroups"));
    if (!cgroups) return std::nullopt;
    f.cgroups = *cgroups;
    f.micros = o.at("micros").to_number<long>();
    if (settings) *settings = o.at("settings").as_string().c_str();
    return f;
  } catch (const std::exception&) {
    return std::nullopt;  // missing or mistyped member: not ours, or an older format
  }
}

std::optional<sdk::ProbeCache> open_probe_cache(const std::filesystem::path& state_dir) {
  // The applet lists of replaced programs are never read again either: pruned with the probes.
  return sdk::ProbeCache::open(state_dir, {.code = reinterpret_cast<const void*>(&open_probe_cache),
                                           .fingerprint_extras = fingerprint_extras(),
                                           .prune_prefixes = {"applets-"}});
}

std::optional<ProbeFacts> load_probe_cache(const sdk::ProbeCache& cache,
                                           std::chrono::system_clock::time_point* proven_at,
                                           std::string* settings) {
  auto entry = cache.load();
  if (!entry) return std::nullopt;
  auto facts = decode_probe_facts(entry->facts, settings);
  if (!facts || !trustworthy(*facts)) return std::nullopt;
  // Groups that were not there are looked for again (cheap when there are none to find);
  // directories that were are checked before anyone makes groups in them.
  if (!cgroups_complete(facts->cgroups))
    facts->cgroups = probe_cgroups_unless_off(::geteuid());
  else if (!sdk::cgroup_dirs_current(facts->cgroups))
    return std::nullopt;
  // A task count per user namespace matters only without a pids group.
  if (!facts->nproc_per_userns && !facts->cgroups.pids) return std::nullopt;
  if (proven_at) *proven_at = entry->proven_at;
  return facts;
}

void store_probe_cache(const sdk::ProbeCache& cache, const ProbeFacts& facts,
                       const std::string& settings) {
  cache.store(encode_probe_facts(facts, settings));
}

}  // namespace cordon::landlock
