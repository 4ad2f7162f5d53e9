// The probe cache: fingerprint, JSON form, and a file only its owner can write.
#include "probe_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cordon/load_hook.hpp>

#include <boost/json.hpp>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "fd.hpp"
#include "reductions.hpp"
#include "ruleset.hpp"

namespace cordon::landlock {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

// Bumped whenever ProbeFacts or what the probe proves changes meaning.
constexpr int kCacheFormat = 2;

// A missing file reads as "-", which no existing file of these holds.
std::string slurp(const char* path, std::size_t cap = 4096) {
  return read_text(path, cap).value_or("-");
}

// The file this code is in: the plugin, or the executable it is built into (cordon's front
// end, a test).
std::string own_file() { return code_file(reinterpret_cast<const void*>(&probe_fingerprint)); }

// That file as it is now: a rebuilt plugin probes again.
std::string own_file_identity() {
  std::string file = own_file();
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

json::object cgroups_json(const CgroupSupport& c) {
  return {{"version", static_cast<int>(c.version)},
          {"memory", c.memory},
          {"pids", c.pids},
          {"cpu", c.cpu},
          {"memory_dir", c.memory_dir},
          {"pids_dir", c.pids_dir},
          {"cpu_dir", c.cpu_dir},
          {"v2_dir", c.v2_dir},
          {"evidence", c.evidence}};
}

CgroupSupport cgroups_of(const json::object& o) {
  CgroupSupport c;
  auto version = o.at("version").to_number<int>();
  if (version < 0 || version > static_cast<int>(CgroupVersion::v2))
    throw std::runtime_error("bad cgroup version");
  c.version = static_cast<CgroupVersion>(version);
  c.memory = o.at("memory").as_bool();
  c.pids = o.at("pids").as_bool();
  c.cpu = o.at("cpu").as_bool();
  c.memory_dir = o.at("memory_dir").as_string().c_str();
  c.pids_dir = o.at("pids_dir").as_string().c_str();
  c.cpu_dir = o.at("cpu_dir").as_string().c_str();
  c.v2_dir = o.at("v2_dir").as_string().c_str();
  c.evidence = o.at("evidence").as_string().c_str();
  return c;
}

bool owned_and_private(const struct stat& st, mode_t forbidden) {
  return st.st_uid == ::geteuid() && (st.st_mode & forbidden) == 0;
}

}  // namespace

std::string probe_fingerprint() {
  utsname u{};
  ::uname(&u);
  return "format " + std::to_string(kCacheFormat) + "\nboot " +
         slurp("/proc/sys/kernel/random/boot_id") + "kernel " + u.release + " " + u.version +
         "\nids " + std::to_string(::geteuid()) + " " + std::to_string(::getegid()) + " " +
         std::to_string(::getuid()) + "\nabi " + std::to_string(landlock_abi()) + "\ncgroup " +
         slurp("/proc/self/cgroup") + "uid_map " + slurp("/proc/self/uid_map") + "plugin " +
         own_file_identity() + "\nreduced " + reductions() + "\n";
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
    out += std::string(sysctl) + " " + slurp(sysctl, 256) + "\n";
  return out;
}

std::string encode_probe_facts(const ProbeFacts& f, const std::string& fingerprint,
                               std::chrono::system_clock::time_point proven_at,
                               const std::string& settings) {
  json::object o{
      {"fingerprint", fingerprint},
      {"settings", settings},
      {"proven_at_ms",
       std::chrono::duration_cast<std::chrono::milliseconds>(proven_at.time_since_epoch()).count()},
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
      {"cgroups", cgroups_json(f.cgroups)},
      {"micros", f.micros}};
  return json::serialize(o);
}

std::optional<ProbeFacts> decode_probe_facts(const std::string& text,
                                             const std::string& fingerprint,
                                             std::chrono::system_clock::time_point now,
                                             std::chrono::system_clock::time_point* proven_at,
                                             std::string* settings) {
  try {
    json::error_code ec;
    json::value v = json::parse(text, ec);
    if (ec || !v.is_object()) return std::nullopt;
    const auto& o = v.as_object();
    if (o.at("fingerprint").as_string() != fingerprint) return std::nullopt;
    std::chrono::system_clock::time_point at{
        std::chrono::milliseconds(o.at("proven_at_ms").to_number<std::int64_t>())};
    if (at > now || now - at >= kProbeCacheTtl) return std::nullopt;
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
    f.cgroups = cgroups_of(o.at("cgroups").as_object());
    f.micros = o.at("micros").to_number<long>();
    if (proven_at) *proven_at = at;
    if (settings) *settings = o.at("settings").as_string().c_str();
    return f;
  } catch (const std::exception&) {
    return std::nullopt;  // missing or mistyped member: not ours, or an older format
  }
}

std::optional<fs::path> probe_cache_file(const fs::path& state_dir) {
  const char* off = std::getenv("CORDON_PROBE_CACHE");
  if (state_dir.empty() || (off && std::strcmp(off, "off") == 0)) return std::nullopt;
  // One file per copy of the code: the plugin and the front end's built-in each keep theirs,
  // rather than replacing each other's on every alternation.
  return state_dir / ("probe-" + short_hash(own_file()) + ".json");
}

std::optional<ProbeFacts> load_probe_cache(const fs::path& file, const std::string& fingerprint,
                                           std::chrono::system_clock::time_point* proven_at,
                                           std::string* settings) {
  struct stat dir {};
  if (::lstat(file.parent_path().c_str(), &dir) != 0 || !S_ISDIR(dir.st_mode) ||
      !owned_and_private(dir, 022))
    return std::nullopt;
  UniqueFd fd(::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  struct stat st {};
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || !owned_and_private(st, 077) ||
      st.st_size > 65536)
    return std::nullopt;
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  if (::read(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()))
    return std::nullopt;
  return decode_probe_facts(text, fingerprint, std::chrono::system_clock::now(), proven_at,
                            settings);
}

void store_probe_cache(const fs::path& file, const ProbeFacts& facts,
                       const std::string& fingerprint, const std::string& settings) {
  // The parents as the umask has them; the directory itself 0700. An existing directory is
  // used only if it is the caller's and nobody else can write it — never re-permitted.
  std::error_code ec;
  fs::create_directories(file.parent_path().parent_path(), ec);
  if (ec) return;
  ::mkdir(file.parent_path().c_str(), 0700);
  struct stat dir {};
  if (::lstat(file.parent_path().c_str(), &dir) != 0 || !S_ISDIR(dir.st_mode) ||
      !owned_and_private(dir, 022))
    return;
  std::string text =
      encode_probe_facts(facts, fingerprint, std::chrono::system_clock::now(), settings);
  fs::path tmp = file;
  tmp += ".tmp-" + std::to_string(::getpid());
  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) return;
  bool ok = ::write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size());
  fd.reset();
  if (!ok || ::rename(tmp.c_str(), file.c_str()) != 0) ::unlink(tmp.c_str());
}

void drop_probe_cache(const fs::path& file) noexcept { ::unlink(file.c_str()); }

}  // namespace cordon::landlock
