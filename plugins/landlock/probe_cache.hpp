// The probe's answer kept between cordon processes, so that a `cordon run` does not pay for a
// full probe (a throwaway sandbox: about 10 ms) every time.
//
// Safe because a run never relies on the probe to enforce anything: every mechanism a run uses
// is applied again and a failure is fatal to the run (CRD1003), never a weaker sandbox. What
// the cache can get wrong is only *which* backend dispatch picks and what `backends` shows,
// so it is kept only while nothing it depends on can have changed:
//   - the fingerprint: boot id, kernel, effective ids, this process's cgroups and user
//     namespace, the Landlock ABI, and this plugin file;
//   - the kernel settings that gate namespaces and seccomp (ten sysctls), checked by a run
//     that used the entry once its command is running, off the start-up's path: a change
//     drops the entry for the next process (this run does not rely on it, as said above);
//   - an age limit (kProbeCacheTtl);
//   - a file owned by the caller, mode 0600, in a directory that is cordon's own at every level
//     (cordon/private_dir.hpp).
// And an entry, even one forged by the caller's own uid (a sandbox of an unprivileged cordon
// runs as that uid), can only ever cost a re-probe:
//   - it never weakens a run: the ruleset is built for the ABI the kernel reports now, and an
//     entry whose ABI or caller differ from now is not used;
//   - it never refuses one: a cached failure, or any "cannot" a fresh probe could turn into
//     "can", is probed again, never believed; cgroups the entry did not find are looked for
//     again;
//   - the cgroup directories it names are used (root makes groups and writes limits in them)
//     only where discovery would find them now, on the cgroup filesystem, reached without a
//     symlink.
// A run that fails to set up its sandbox removes the entry, so the next one probes afresh.
// CORDON_PROBE_CACHE=off disables it.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include "probe.hpp"

namespace cordon::landlock {

/// How long a cached probe is trusted.
inline constexpr std::chrono::minutes kProbeCacheTtl{10};

/// What the cached answer depends on, checked before it is used, as one string (reads /proc;
/// no side effects).
std::string probe_fingerprint();

/// The sysctls that gate namespaces and seccomp, as one string: checked after the entry is
/// used (reads /proc/sys; no side effects).
std::string kernel_settings();

/// Serialises facts (with the fingerprint, the kernel settings and the time they were proven)
/// as JSON text. Pure.
std::string encode_probe_facts(const ProbeFacts& facts, const std::string& fingerprint,
                               std::chrono::system_clock::time_point proven_at,
                               const std::string& settings = {});

/// The facts in `text` if it is well formed, its fingerprint is `fingerprint` and it is younger
/// than kProbeCacheTtl at `now`; `proven_at` gets the time of the probe and `settings` the
/// kernel settings it was made under. Pure.
std::optional<ProbeFacts> decode_probe_facts(const std::string& text,
                                             const std::string& fingerprint,
                                             std::chrono::system_clock::time_point now,
                                             std::chrono::system_clock::time_point* proven_at,
                                             std::string* settings = nullptr);

/// The cache file of a backend state directory, or nullopt when caching is off
/// (CORDON_PROBE_CACHE=off, or no state directory): probe-<hash of the file this code is in>.json,
/// so that the plugin and an executable with the backend built in keep one each.
std::optional<std::filesystem::path> probe_cache_file(const std::filesystem::path& state_dir);

/// Reads the cache; nullopt when missing, stale, foreign-owned, loosely permitted, when it
/// holds a failure or a negative answer, an ABI or caller other than now's, or cgroup
/// directories that are not where discovery finds them now (see above).
std::optional<ProbeFacts> load_probe_cache(const std::filesystem::path& file,
                                           const std::string& fingerprint,
                                           std::chrono::system_clock::time_point* proven_at,
                                           std::string* settings = nullptr);

/// Entries ("probe-*", "applets-*") untouched for this long are removed when a probe is stored.
inline constexpr long kStaleEntrySeconds = 24 * 3600;

/// Writes the cache atomically (0600, in a PrivateDir it creates or verifies), and removes the
/// directory's stale entries (kStaleEntrySeconds). Failures are ignored: the cache is an
/// optimisation.
void store_probe_cache(const std::filesystem::path& file, const ProbeFacts& facts,
                       const std::string& fingerprint, const std::string& settings = {});

/// Removes the cache file, if any.
void drop_probe_cache(const std::filesystem::path& file) noexcept;

}  // namespace cordon::landlock
