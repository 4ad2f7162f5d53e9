// landlock's probe in the SDK's probe cache (cordon/sdk/probe_cache.hpp), which keeps it between
// cordon processes under the common fingerprint, an age limit and a private file. What is
// landlock's own:
//   - its fingerprint extras: the format of its facts, the Landlock ABI, and the reductions a
//     test asked for (reductions.hpp);
//   - its facts' encoding, and what of them it believes: a cached failure, or any "cannot" a
//     fresh probe could turn into "can", is probed again, never believed; nor is an ABI or a
//     caller other than now's; cgroups the entry did not find are looked for again, and those it
//     names are used only where discovery finds them now (sdk::cgroup_dirs_current());
//   - the kernel settings that gate namespaces and seccomp (ten sysctls), kept with the facts
//     and checked by a run that used the entry once its command is running, off the start-up's
//     path: a change drops the entry for the next process (this run does not rely on it: every
//     mechanism a run uses is applied again, and a failure is fatal to it, CRD1003).
// The applet lists (applet_cache.hpp) share the state directory and are pruned with it.
#pragma once

#include <cordon/sdk/probe_cache.hpp>

#include <boost/json/value.hpp>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include "probe.hpp"

namespace cordon::landlock {

/// What landlock's answer depends on besides the SDK's common fingerprint, as one string (its
/// facts' format, the Landlock ABI, the reductions). Reads the kernel; no side effects.
std::string fingerprint_extras();

/// The sysctls that gate namespaces and seccomp, as one string: checked after the entry is
/// used (reads /proc/sys; no side effects).
std::string kernel_settings();

/// Facts with the kernel settings they were proven under, as JSON. Pure.
boost::json::value encode_probe_facts(const ProbeFacts& facts, const std::string& settings = {});

/// The facts in `v` when it is what encode_probe_facts() makes; `settings` gets the kernel
/// settings. Pure: believing them is load_probe_cache()'s.
std::optional<ProbeFacts> decode_probe_facts(const boost::json::value& v,
                                             std::string* settings = nullptr);

/// The cache of a backend state directory, or nullopt when caching is off
/// (CORDON_PROBE_CACHE=off, or no state directory): probe-<hash of the file this code is in>.json.
std::optional<sdk::ProbeCache> open_probe_cache(const std::filesystem::path& state_dir);

/// The cached facts when the SDK finds the entry valid and landlock believes it (see above);
/// `proven_at` gets the time of the probe and `settings` the kernel settings it was made under.
std::optional<ProbeFacts> load_probe_cache(const sdk::ProbeCache& cache,
                                           std::chrono::system_clock::time_point* proven_at,
                                           std::string* settings = nullptr);

/// Stores `facts` with `settings` (sdk::ProbeCache::store: failures are ignored).
void store_probe_cache(const sdk::ProbeCache& cache, const ProbeFacts& facts,
                       const std::string& settings = {});

}  // namespace cordon::landlock
