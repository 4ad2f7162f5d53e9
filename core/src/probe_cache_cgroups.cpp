// probe_cgroups()' answer in a cached probe (cordon/sdk/probe_cache.hpp): its JSON form, and
// whether the directories it names are where discovery would find them now. Root makes groups
// in them and writes their limits, so a forged entry must not point it elsewhere.
#include <cordon/sdk/owned_fd.hpp>
#include <cordon/sdk/path_guard.hpp>
#include <cordon/sdk/probe_cache.hpp>

#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <boost/json.hpp>

#include <stdexcept>

#include "cgroup_mounts.hpp"

namespace cordon::sdk {

namespace json = boost::json;

json::object cgroup_support_json(const CgroupSupport& c) {
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

std::optional<CgroupSupport> cgroup_support_from_json(const json::value& v) {
  try {
    const auto& o = v.as_object();
    CgroupSupport c;
    auto version = o.at("version").to_number<int>();
    if (version < 0 || version > static_cast<int>(CgroupVersion::v2)) return std::nullopt;
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
  } catch (const std::exception&) {
    return std::nullopt;  // a missing or mistyped member
  }
}

namespace {

// What discovery reads, read once: mountinfo and this process's cgroups.
struct CgroupView {
  std::string groups = read_text("/proc/self/cgroup", 4096).value_or("");
  cgroup_text::CgroupMounts mounts =
      cgroup_text::mounts(read_text("/proc/self/mountinfo", 1 << 20).value_or(""));
};

// The mount point of the hierarchy of `controller` ("" for the v2 one), as discovery finds it.
std::string cgroup_mount(const CgroupView& view, const std::string& controller) {
  const auto& m = view.mounts;
  if (controller.empty()) return m.v2;
  if (controller == "memory") return m.memory;
  if (controller == "pids") return m.pids;
  return controller == "cpu" ? m.cpu : std::string();
}

std::optional<std::string> own_group(const CgroupView& view, const std::string& controller) {
  return cgroup_text::own_group(view.groups, controller);
}

// `dir` is a directory of the cgroup filesystem (`magic`), reached without a symlink.
bool cgroup_dir(const std::string& dir, long magic) {
  OwnedFd fd(open_without_symlinks(dir));
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

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// v2: "<mount><an ancestor of this process's group>/cordon", that ancestor being root's or
// (for another caller) owned by it, as a delegated subtree is.
bool v2_dir_current(const CgroupView& view, const std::string& dir) {
  auto own = own_group(view, "");
  std::string mnt = cgroup_mount(view, ""), suffix = "/cordon";
  if (!own || mnt.empty() || dir.size() <= mnt.size() + suffix.size() ||
      dir.compare(0, mnt.size(), mnt) != 0 || !ends_with(dir, suffix))
    return false;
  std::string base = dir.substr(mnt.size(), dir.size() - mnt.size() - suffix.size());
  std::string group = *own == "/" ? "" : *own;
  bool ancestor = base.empty() || (group.compare(0, base.size(), base) == 0 &&
                                   (group.size() == base.size() || group[base.size()] == '/'));
  struct stat st {};
  uid_t euid = ::geteuid();
  if (!ancestor ||
      (euid != 0 && (base.empty() || ::stat((mnt + base).c_str(), &st) != 0 || st.st_uid != euid)))
    return false;
  return cgroup_dir(dir, CGROUP2_SUPER_MAGIC);
}

}  // namespace

bool cgroup_dirs_current(const CgroupSupport& c) {
  if (c.version == CgroupVersion::none) return true;
  CgroupView view;
  if (c.version == CgroupVersion::v2) return v2_dir_current(view, c.v2_dir);
  return v1_dir_current(view, c.memory, c.memory_dir, "memory") &&
         v1_dir_current(view, c.pids, c.pids_dir, "pids") &&
         v1_dir_current(view, c.cpu, c.cpu_dir, "cpu");
}

}  // namespace cordon::sdk
