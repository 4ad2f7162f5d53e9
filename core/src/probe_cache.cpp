// The backend toolkit's probe cache (cordon/sdk/probe_cache.hpp): the common fingerprint, the
// entry's JSON form, and a file only its owner can write, in a directory that is cordon's own.
#include <cordon/sdk/probe_cache.hpp>

#include <cordon/load_hook.hpp>
#include <cordon/sdk/error.hpp>
#include <cordon/sdk/owned_fd.hpp>
#include <cordon/sdk/private_dir.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <boost/json.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <stdexcept>

namespace cordon::sdk {

namespace fs = std::filesystem;
namespace json = boost::json;
using Clock = std::chrono::system_clock;

namespace {

// Bumped whenever the entry's form or the common fingerprint changes meaning.
constexpr int kEntryFormat = 1;

// An entry is a few kilobytes; anything much larger is not one.
constexpr off_t kMaxEntryBytes = 65536;

// A missing file reads as "-", which no existing file of these holds.
std::string slurp(const char* path, std::size_t cap = 4096) {
  return read_text(path, cap).value_or("-");
}

// The file holding the backend's code as it is now: a rebuilt plugin probes again.
std::string file_identity(const std::string& file) {
  struct stat st {};
  if (file.empty() || ::stat(file.c_str(), &st) != 0) return "unknown-file";
  return file + ":" + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" +
         std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec);
}

// 64-bit FNV-1a, as 16 hex digits: a stable short name for a path.
std::string short_hash(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ULL;
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h));
  return out;
}

bool cache_disabled() {
  const char* off = std::getenv("CORDON_PROBE_CACHE");
  return off && std::strcmp(off, "off") == 0;
}

bool one_component(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
}

std::int64_t milliseconds_of(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

// Entries of other fingerprints (an earlier build, boot or kernel) are never read again; one
// untouched for kProbeCacheStaleAfter goes when a new probe is stored (at worst a build still
// in use probes once more).
void prune_stale(const PrivateDir& dir, const std::string& keep,
                 const std::vector<std::string>& prefixes) {
  const std::time_t cutoff =
      std::time(nullptr) -
      std::chrono::duration_cast<std::chrono::seconds>(kProbeCacheStaleAfter).count();
  for (const auto& name : dir.entries()) {
    bool ours = false;
    for (const auto& prefix : prefixes) ours = ours || name.rfind(prefix, 0) == 0;
    if (name == keep || !ours) continue;
    struct stat st {};
    if (::fstatat(dir.fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
        st.st_mtime < cutoff)
      dir.remove(name);
  }
}

}  // namespace

std::string probe_fingerprint(const void* code) {
  utsname u{};
  ::uname(&u);
  return "probe cache format " + std::to_string(kEntryFormat) + "\nboot " +
         slurp("/proc/sys/kernel/random/boot_id") + "kernel " + u.release + " " + u.version +
         "\nids " + std::to_string(::geteuid()) + " " + std::to_string(::getegid()) + " " +
         std::to_string(::getuid()) + "\ncgroup " + slurp("/proc/self/cgroup") + "uid_map " +
         slurp("/proc/self/uid_map") + "code " + file_identity(code_file(code).string()) + "\n";
}

std::optional<ProbeCache> ProbeCache::open(const fs::path& state_dir, ProbeCacheOptions options) {
  if (!options.code) throw std::invalid_argument("probe cache: no code address");
  if (!one_component(options.name))
    throw std::invalid_argument("probe cache: bad name '" + options.name + "'");
  if (state_dir.empty() || cache_disabled()) return std::nullopt;
  ProbeCache cache;
  // One entry per copy of the code: the plugin and the front end's built-in each keep theirs,
  // rather than replacing each other's on every alternation.
  cache.file_ =
      state_dir / (options.name + "-" + short_hash(code_file(options.code).string()) + ".json");
  cache.fingerprint_ = probe_fingerprint(options.code) + options.fingerprint_extras;
  cache.ttl_ = options.ttl;
  cache.prune_prefixes_ = std::move(options.prune_prefixes);
  cache.prune_prefixes_.push_back(options.name + "-");
  return cache;
}

std::string ProbeCache::encode(const json::value& facts, const std::string& fingerprint,
                               Clock::time_point proven_at) {
  return json::serialize(json::object{{"fingerprint", fingerprint},
                                      {"proven_at_ms", milliseconds_of(proven_at)},
                                      {"facts", facts}});
}

std::optional<CachedProbe> ProbeCache::decode(std::string_view text, const std::string& fingerprint,
                                              Clock::time_point now,
                                              std::chrono::seconds ttl) noexcept {
  try {
    json::error_code ec;
    json::value v = json::parse(text, ec);
    if (ec || !v.is_object()) return std::nullopt;
    auto& o = v.as_object();
    if (o.at("fingerprint").as_string() != fingerprint) return std::nullopt;
    Clock::time_point at{std::chrono::milliseconds(o.at("proven_at_ms").to_number<std::int64_t>())};
    // One from the future is no younger than the limit: its clock is not ours to trust.
    if (at > now || now - at >= ttl) return std::nullopt;
    return CachedProbe{std::move(o.at("facts")), at};
  } catch (const std::exception&) {
    return std::nullopt;  // a missing or mistyped member: not an entry, or an older form
  }
}

std::optional<CachedProbe> ProbeCache::load() const noexcept {
  try {
    auto dir = PrivateDir::open(file_.parent_path());
    if (!dir) return std::nullopt;
    // open_file: no symlink, a regular file of the caller's; the mode is checked here.
    OwnedFd fd = dir->open_file(file_.filename().string(), O_RDONLY);
    struct stat st {};
    if (!fd || ::fstat(fd.get(), &st) != 0 || (st.st_mode & 077) != 0 ||
        st.st_size > kMaxEntryBytes)
      return std::nullopt;
    std::string text(static_cast<std::size_t>(st.st_size), '\0');
    if (::read(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()))
      return std::nullopt;
    return decode(text, fingerprint_, Clock::now(), ttl_);
  } catch (const std::exception&) {
    return std::nullopt;  // not cordon's own (CRD1006), unreadable: probe afresh
  }
}

void ProbeCache::store(const json::value& facts, Clock::time_point proven_at) const noexcept {
  try {
    PrivateDir dir = PrivateDir::create(file_.parent_path());
    dir.write_file(file_.filename().string(), encode(facts, fingerprint_, proven_at), 0600);
    prune_stale(dir, file_.filename().string(), prune_prefixes_);
  } catch (const std::exception&) {
    // the cache is an optimisation
  }
}

void ProbeCache::drop() const noexcept {
  try {
    if (auto dir = PrivateDir::open(file_.parent_path())) dir->remove(file_.filename().string());
  } catch (...) {
  }
}

void ProbeCache::drop_after_failed_setup(const RunResult& result) const noexcept {
  if (result.error && result.error->code() == code::kIsolationFailed) drop();
}

}  // namespace cordon::sdk
