// The probe cache: fingerprint, JSON form, and a file only its owner can write.
#include "probe_cache.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cordon/load_hook.hpp>
#include <cordon/sdk/path_guard.hpp>
#include <cordon/sdk/private_dir.hpp>

#include <boost/json.hpp>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <sstream>
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

json::object cgroups_json(const sdk::CgroupSupport& c) {
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

sdk::CgroupSupport cgroups_of(const json::object& o) {
  sdk::CgroupSupport c;
  auto version = o.at("version").to_number<int>();
  if (version < 0 || version > static_cast<int>(sdk::CgroupVersion::v2))
    throw std::runtime_error("bad cgroup version");
  c.version = static_cast<sdk::CgroupVersion>(version);
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

// What discovery reads, read once: mountinfo and this process's cgroups.
struct CgroupView {
  std::string mountinfo = slurp("/proc/self/mountinfo", 1 << 20);
  std::string groups = slurp("/proc/self/cgroup");
};

// The mount point of the cgroup hierarchy of `controller` ("" for the v2 one), from
// mountinfo; empty when there is none.
std::string cgroup_mount(const CgroupView& view, const std::string& controller) {
  const std::string& text = view.mountinfo;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    std::string line = text.substr(at, end == std::string::npos ? end : end - at);
    at = end == std::string::npos ? text.size() : end + 1;
    auto dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream head(line.substr(0, dash)), tail(line.substr(dash + 3));
    std::string id, parent, dev, root, mnt, type, source, options;
    head >> id >> parent >> dev >> root >> mnt;
    tail >> type >> source >> options;
    if (controller.empty()
            ? type == "cgroup2"
            : type == "cgroup" &&
                  ("," + options + ",").find("," + controller + ",") != std::string::npos)
      return mnt;
  }
  return {};
}

// This process's group in the hierarchy of `controller` ("" for v2), from /proc/self/cgroup.
std::optional<std::string> own_group(const CgroupView& view, const std::string& controller) {
  std::istringstream in(view.groups);
  for (std::string line; std::getline(in, line);) {
    auto first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    std::string list = "," + line.substr(first + 1, second - first - 1) + ",";
    if (controller.empty() ? line.compare(0, first, "0") == 0
                           : list.find("," + controller + ",") != std::string::npos)
      return line.substr(second + 1);
  }
  return std::nullopt;
}

// `dir` is a directory of the cgroup filesystem (`magic`), reached without a symlink.
bool cgroup_dir(const std::string& dir, long magic) {
  UniqueFd fd(open_without_symlinks(dir));
  struct statfs fs {};
  return fd && ::fstatfs(fd.get(), &fs) == 0 && static_cast<long>(fs.f_type) == magic;
}

// Where probe_cgroups() would put a v1 controller's groups now: its hierarchy's mount plus
// this process's group.
bool v1_dir_current(const CgroupView& view, bool used, const std::string& dir,
                    const std::string& controller) {
  if (!used) return true;
  auto own = own_group(view, controller);
  std::string mnt = cgroup_mount(view, controller);
  if (!own || mnt.empty() || dir != mnt + *own) return false;
  return cgroup_dir(dir, CGROUP_SUPER_MAGIC);
}

// v2: "<mount><an ancestor of this process's group>/cordon", that ancestor being root's or
// (for another caller) delegated to it.
bool v2_dir_current(const CgroupView& view, const std::string& dir) {
  auto own = own_group(view, "");
  std::string mnt = cgroup_mount(view, ""), suffix = "/cordon";
  if (!own || mnt.empty() || dir.size() <= mnt.size() + suffix.size() ||
      dir.compare(0, mnt.size(), mnt) != 0 ||
      dir.compare(dir.size() - suffix.size(), suffix.size(), suffix) != 0)
    return false;
  std::string base = dir.substr(mnt.size(), dir.size() - mnt.size() - suffix.size());
  std::string group = *own == "/" ? "" : *own;
  bool prefix = base.empty() || (group.compare(0, base.size(), base) == 0 &&
                                 (group.size() == base.size() || group[base.size()] == '/'));
  struct stat st {};
  uid_t euid = ::geteuid();
  if (!prefix ||
      (euid != 0 && (base.empty() || ::stat((mnt + base).c_str(), &st) != 0 || st.st_uid != euid)))
    return false;
  return cgroup_dir(dir, CGROUP2_SUPER_MAGIC);
}

// Root acts through the cached directories (it makes groups in them and writes their limits):
// they must be where discovery would find them now, on the cgroup filesystem.
bool cgroup_dirs_current(const sdk::CgroupSupport& c) {
  CgroupView view;
  if (c.version == sdk::CgroupVersion::v2) return v2_dir_current(view, c.v2_dir);
  return v1_dir_current(view, c.memory, c.memory_dir, "memory") &&
         v1_dir_current(view, c.pids, c.pids_dir, "pids") &&
         v1_dir_current(view, c.cpu, c.cpu_dir, "cpu");
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
  try {
    auto dir = PrivateDir::open(file.parent_path());
    if (!dir) return std::nullopt;
    OwnedFd fd = dir->open_file(file.filename().string(), O_RDONLY);
    struct stat st {};
    if (!fd || ::fstat(fd.get(), &st) != 0 || (st.st_mode & 077) != 0 || st.st_size > 65536)
      return std::nullopt;
    std::string text(static_cast<std::size_t>(st.st_size), '\0');
    if (::read(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()))
      return std::nullopt;
    auto facts = decode_probe_facts(text, fingerprint, std::chrono::system_clock::now(), proven_at,
                                    settings);
    if (!facts || !trustworthy(*facts)) return std::nullopt;
    // Groups that were not there are looked for again (cheap when there are none to find);
    // directories that were are checked before anyone makes groups in them.
    if (!cgroups_complete(facts->cgroups))
      facts->cgroups = probe_cgroups_unless_off(::geteuid());
    else if (!cgroup_dirs_current(facts->cgroups))
      return std::nullopt;
    // A task count per user namespace matters only without a pids group.
    if (!facts->nproc_per_userns && !facts->cgroups.pids) return std::nullopt;
    return facts;
  } catch (const std::exception&) {
    return std::nullopt;  // not cordon's own (CRD1006), unreadable: probe afresh
  }
}

namespace {

// Entries of other fingerprints (an earlier build, boot or kernel) and applet lists of replaced
// programs are never read again; one untouched for a day goes when a new probe is stored (at
// worst a build still in use probes once more).
void prune_stale(const PrivateDir& dir, const std::string& keep) {
  const std::time_t cutoff = std::time(nullptr) - kStaleEntrySeconds;
  for (const auto& name : dir.entries()) {
    if (name == keep || (name.rfind("probe-", 0) != 0 && name.rfind("applets-", 0) != 0)) continue;
    struct stat st {};
    if (::fstatat(dir.fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
        st.st_mtime < cutoff)
      dir.remove(name);
  }
}

}  // namespace

void store_probe_cache(const fs::path& file, const ProbeFacts& facts,
                       const std::string& fingerprint, const std::string& settings) {
  // Every level cordon's own (PrivateDir): a directory someone else controls is never used,
  // nor re-permitted.
  try {
    PrivateDir dir = PrivateDir::create(file.parent_path());
    dir.write_file(
        file.filename().string(),
        encode_probe_facts(facts, fingerprint, std::chrono::system_clock::now(), settings), 0600);
    prune_stale(dir, file.filename().string());
  } catch (const std::exception&) {
    // the cache is an optimisation
  }
}

void drop_probe_cache(const fs::path& file) noexcept {
  try {
    if (auto dir = PrivateDir::open(file.parent_path())) dir->remove(file.filename().string());
  } catch (...) {
  }
}

}  // namespace cordon::landlock
