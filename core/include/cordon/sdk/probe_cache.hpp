// The backend toolkit: a probe's answer kept between cordon processes, so that a `cordon run`
// does not pay for a full probe (landlock's makes a throwaway sandbox: about 10 ms) every time.
//
// Safe only for a backend whose runs never rely on the probe to enforce anything: every
// mechanism a run uses is applied again, and a failure is fatal to the run (CRD1003), never a
// weaker sandbox. What a cached answer can get wrong is then only *which* backend dispatch picks
// and what `backends` shows, so an entry is kept only while nothing it depends on can have
// changed:
//   - the fingerprint: boot id, kernel, effective ids, this process's cgroups and user
//     namespace, the file holding the backend's code (probe_fingerprint()), and what else the
//     backend names (ProbeCacheOptions::fingerprint_extras; landlock: its ABI);
//   - an age limit (ProbeCacheOptions::ttl, kProbeCacheTtl by default);
//   - a file owned by the caller, mode 0600, in a directory that is cordon's own at every level
//     (cordon/private_dir.hpp); anything else is not read.
// And an entry, even one forged by the caller's own uid (a sandbox of an unprivileged cordon
// runs as that uid), may only ever cost a re-probe. The cache stores and checks the above; the
// backend, which alone knows what its facts mean, keeps the rest of the rule when it decodes:
//   - never weaken a run: what a run enforces with is what the host offers now, never a cached
//     value (landlock builds its ruleset for the ABI the kernel reports now);
//   - never refuse one: an entry that holds a failure, or any "cannot" a fresh probe could turn
//     into "can", is treated as absent and probed again, never believed — and never stored;
//   - a path the entry names is used only where a fresh discovery would find it now
//     (cgroup_dirs_current() for the cgroups of sdk/cgroup.hpp).
// A run that fails to set up its sandbox drops the entry (drop_after_failed_setup()), so the
// next process probes afresh. CORDON_PROBE_CACHE=off disables every backend's cache.
//
//   auto cache = sdk::ProbeCache::open(context().state_dir,
//                                      {.code = reinterpret_cast<const void*>(&make_backend)});
//   if (auto hit = cache ? cache->load() : std::nullopt; hit && (facts = decode(hit->facts)))
//     ...;  // decode() returns nothing for an entry it does not believe
//   else if (facts = probe_now(); cache && facts.usable) cache->store(encode(facts));
#pragma once

#include <cordon/sdk/cgroup.hpp>
#include <cordon/sdk/export.hpp>
#include <cordon/sdk/result.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::sdk {

/// How long a cached probe is trusted unless the backend says otherwise.
inline constexpr std::chrono::minutes kProbeCacheTtl{10};

/// Entries of the state directory untouched for this long (an earlier build's, boot's or
/// kernel's, never read again) are removed when a probe is stored.
inline constexpr std::chrono::hours kProbeCacheStaleAfter{24};

/// The fingerprint parts every backend's answer depends on, one per line: the cache's format,
/// the boot id, the kernel (release and version), the effective uid and gid and the real uid,
/// this process's cgroups and user namespace (uid_map), and the file holding `code` (its path,
/// device, inode, size and modification time, so a rebuilt plugin probes again). `code` is the
/// address of a function of the backend: its plugin, or the executable it is built into.
/// Reads /proc; no side effects.
CORDON_API std::string probe_fingerprint(const void* code);

/// What a backend's cache is made of.
struct ProbeCacheOptions {
  /// The address of a function of the backend (required): the file holding it is part of the
  /// fingerprint and of the entry's name, "<name>-<hash of that file's path>.json", so that the
  /// plugin and an executable with the backend built in keep one entry each.
  const void* code = nullptr;
  /// What else the backend's answer depends on, appended to the fingerprint (landlock: its
  /// format, the Landlock ABI, the reductions a test asked for).
  std::string fingerprint_extras = {};
  /// The entry's name prefix, one path component.
  std::string name = "probe";
  /// How long an entry is trusted.
  std::chrono::seconds ttl = kProbeCacheTtl;
  /// Name prefixes of the backend's other entries in its state directory (landlock:
  /// "applets-") removed, like stale probe entries, when untouched for kProbeCacheStaleAfter.
  std::vector<std::string> prune_prefixes = {};
};

/// A valid entry: the backend's facts, and when they were proven.
struct CachedProbe {
  boost::json::value facts;
  std::chrono::system_clock::time_point proven_at;
};

/// One backend's probe cache: a file in its state directory (BackendContext::state_dir).
/// Copyable; const members may be called from any thread.
class CORDON_API ProbeCache {
 public:
  /// The cache of `state_dir`, with its fingerprint computed now; nullopt when caching is off
  /// (CORDON_PROBE_CACHE=off, or no state directory). Creates nothing. Throws std::invalid_argument
  /// when `options.code` is null or `options.name` is not one path component.
  static std::optional<ProbeCache> open(const std::filesystem::path& state_dir,
                                        ProbeCacheOptions options);

  /// The facts of the entry when it is valid: a regular file owned by the caller, mode 0600 or
  /// stricter, in a directory that is cordon's own (nothing is followed through a symlink),
  /// well formed, of this fingerprint, proven no later than now and less than the TTL ago.
  /// nullopt otherwise, never an exception. The backend still decides what it believes (see
  /// above).
  std::optional<CachedProbe> load() const noexcept;

  /// Writes the entry atomically (0600, in a directory it creates or verifies to be cordon's
  /// own: one someone else controls is never used, nor re-permitted), then removes stale
  /// entries (kProbeCacheStaleAfter). Store only an answer no fresh probe could better (no
  /// failure, no "cannot" a probe could turn into "can"). Failures are ignored: the cache is
  /// an optimisation.
  void store(const boost::json::value& facts, std::chrono::system_clock::time_point proven_at =
                                                  std::chrono::system_clock::now()) const noexcept;

  /// Removes the entry, if any.
  void drop() const noexcept;

  /// Removes the entry when `result` failed to set up its sandbox (CRD1003, isolation failed):
  /// the host may have changed since the probe, so the next process proves it afresh.
  void drop_after_failed_setup(const RunResult& result) const noexcept;

  /// The entry's file.
  const std::filesystem::path& file() const noexcept { return file_; }
  /// The fingerprint an entry must carry: probe_fingerprint() and the backend's extras.
  const std::string& fingerprint() const noexcept { return fingerprint_; }
  /// How long an entry is trusted.
  std::chrono::seconds ttl() const noexcept { return ttl_; }

  /// An entry's text: `facts` with `fingerprint` and `proven_at`. Pure.
  static std::string encode(const boost::json::value& facts, const std::string& fingerprint,
                            std::chrono::system_clock::time_point proven_at);
  /// The entry in `text` when it is well formed, carries `fingerprint`, and was proven no
  /// later than `now` and less than `ttl` before it. Pure; never throws.
  static std::optional<CachedProbe> decode(std::string_view text, const std::string& fingerprint,
                                           std::chrono::system_clock::time_point now,
                                           std::chrono::seconds ttl) noexcept;

 private:
  ProbeCache() = default;
  std::filesystem::path file_;
  std::string fingerprint_;
  std::chrono::seconds ttl_{kProbeCacheTtl};
  std::vector<std::string> prune_prefixes_;
};

/// `c` as JSON, for a backend that keeps probe_cgroups()' answer in its facts. Pure.
CORDON_API boost::json::object cgroup_support_json(const CgroupSupport& c);

/// The CgroupSupport in `v`; nullopt when it is not one cgroup_support_json() makes. Pure.
CORDON_API std::optional<CgroupSupport> cgroup_support_from_json(const boost::json::value& v);

/// Whether the directories `c` names are where probe_cgroups(geteuid()) would put sandbox groups
/// now: v1, each used controller's hierarchy mount plus this process's group; v2, "<mount><an
/// ancestor of this process's group>/cordon", that ancestor being root's or (for another
/// caller) owned by the caller; each on the cgroup filesystem, reached without a symlink. A
/// cached answer's groups are used (root makes groups in them and writes their limits) only
/// when this holds. True for CgroupVersion::none. Reads /proc and the cgroup filesystem.
CORDON_API bool cgroup_dirs_current(const CgroupSupport& c);

}  // namespace cordon::sdk
