// The backend toolkit's cgroups (cordon/sdk/cgroup.hpp): discovery by doing, the per-run group.
#include <cordon/sdk/cgroup.hpp>

#include <cordon/sdk/error.hpp>
#include <cordon/sdk/owned_fd.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <sstream>
#include <string_view>
#include <thread>

#include "cgroup_mounts.hpp"

namespace cordon::sdk {

namespace {

// The `index`-th space-separated field of `line` (0-based).
std::string_view field(std::string_view line, int index) {
  std::size_t pos = 0;
  for (int i = 0; i < index; ++i) {
    pos = line.find(' ', pos);
    if (pos == std::string_view::npos) return {};
    ++pos;
  }
  return line.substr(pos, line.find(' ', pos) - pos);
}

// Whether `word` is one of the `sep`-separated items of `list`.
bool listed(std::string_view list, std::string_view word, char sep) {
  while (true) {
    const std::size_t end = std::min(list.find(sep), list.size());
    if (list.substr(0, end) == word) return true;
    if (end == list.size()) return false;
    list.remove_prefix(end + 1);
  }
}

// The next line of `text`, taken off it.
std::string_view next_line(std::string_view& text) {
  std::string_view line = text.substr(0, text.find('\n'));
  text.remove_prefix(std::min(text.size(), line.size() + 1));
  return line;
}

}  // namespace

namespace cgroup_text {

CgroupMounts mounts(std::string_view mountinfo) {
  CgroupMounts m;
  while (!mountinfo.empty()) {
    std::string_view line = next_line(mountinfo);
    auto dash = line.find(" - ");
    if (dash == std::string_view::npos) continue;
    std::string_view mnt = field(line.substr(0, dash), 4), post = line.substr(dash + 3);
    std::string_view fstype = field(post, 0), options = field(post, 2);
    if (fstype == "cgroup2" && m.v2.empty()) m.v2 = mnt;
    if (fstype != "cgroup") continue;
    if (listed(options, "memory", ',')) m.memory = mnt;
    if (listed(options, "pids", ',')) m.pids = mnt;
    if (listed(options, "cpu", ',')) m.cpu = mnt;
  }
  return m;
}

std::optional<std::string> own_group(std::string_view self_cgroup, std::string_view controller) {
  while (!self_cgroup.empty()) {
    std::string_view line = next_line(self_cgroup);
    auto first = line.find(':');
    if (first == std::string_view::npos) continue;
    auto second = line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    std::string_view controllers = line.substr(first + 1, second - first - 1);
    if (controller.empty() ? line.substr(0, first) == "0" : listed(controllers, controller, ','))
      return std::string(line.substr(second + 1));
  }
  return std::nullopt;
}

}  // namespace cgroup_text

namespace {

std::string read_text_or_empty(const std::string& path) { return read_text(path).value_or(""); }

// O_TRUNC as a shell's `>` does: the kernel's files ignore it, a simulated tree's need it.
bool write_text(const std::string& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  int err = errno;
  ::close(fd);
  errno = err;
  return ok;
}

void must_write(const std::string& path, const std::string& text) {
  if (!write_text(path, text))
    throw Error(code::kIsolationFailed,
                "cgroup: cannot write '" + text + "' to '" + path + "': " + std::strerror(errno));
}

// The value of `key` in a flat-keyed file ("oom_kill 3" lines); nullopt when it is not there.
std::optional<std::uint64_t> count_of(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string name;
  std::uint64_t value = 0;
  while (in >> name >> value)
    if (name == key) return value;
  return std::nullopt;
}

bool has_word(const std::string& list, const std::string& word) {
  std::istringstream in(list);
  std::string w;
  while (in >> w)
    if (w == word) return true;
  return false;
}

using Mounts = cgroup_text::CgroupMounts;

std::string own_group(const std::string& self_cgroup, const std::string& controller) {
  return cgroup_text::own_group(self_cgroup, controller).value_or("");
}

std::string unique_name(const char* prefix) {
  static std::atomic<unsigned> counter{0};
  return std::string(prefix) + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

// Creates and removes a test group under `dir`; true when both worked.
bool can_create(const CgroupOps& ops, const std::string& dir, const char* file_expected) {
  std::string test = dir + "/" + unique_name("cordon-probe-");
  if (ops.make_group(test) != 0) return false;
  bool ok = file_expected == nullptr || ::access((test + "/" + file_expected).c_str(), F_OK) == 0;
  ops.remove_group(test);
  return ok;
}

// Swap the kernel does not charge to a group lets the group's processes grow past its memory
// limit into swap: the limit is then no total. `accounting_file` is the group's swap limit.
bool swap_escapes(const CgroupHost& host, const std::string& accounting_file) {
  return lists_swap(host.swaps) && ::access(accounting_file.c_str(), F_OK) != 0;
}

std::string unaccounted_swap(const std::string& file) {
  return "; swap is on and not charged to cgroups (no " + file +
         "), so a memory limit would be no total";
}

// v2: the highest ancestor of our group that we own (root owns the whole tree), provided it
// enables memory and pids for its children.
bool probe_v2(const CgroupHost& host, const Mounts& m, uid_t euid, CgroupSupport& out) {
  if (m.v2.empty()) return false;
  std::string controllers = read_text_or_empty(m.v2 + "/cgroup.controllers");
  if (!has_word(controllers, "memory") || !has_word(controllers, "pids")) {
    out.evidence = "cgroup v2 at " + m.v2 + " lacks the memory and pids controllers";
    return false;
  }
  std::string base = m.v2;
  if (euid != 0) {
    std::string own = own_group(host.self_cgroup, "");
    std::string walk = m.v2 + own;
    base.clear();
    while (walk.size() > m.v2.size()) {
      struct stat st {};
      if (::stat(walk.c_str(), &st) != 0 || st.st_uid != euid) break;
      base = walk;
      walk = walk.substr(0, walk.rfind('/'));
    }
    if (base.empty()) {
      out.evidence = "cgroup v2: no subtree delegated to uid " + std::to_string(euid);
      return false;
    }
  }
  std::string parent = base + "/cordon";
  if (int e = host.ops.make_group(parent); e != 0 && e != EEXIST) {
    out.evidence = "cgroup v2: cannot create " + parent + ": " + std::strerror(e);
    return false;
  }
  bool cpu = has_word(read_text_or_empty(parent + "/cgroup.controllers"), "cpu");
  write_text(parent + "/cgroup.subtree_control", cpu ? "+memory +pids +cpu" : "+memory +pids");
  if (!can_create(host.ops, parent, "memory.max")) {
    out.evidence = "cgroup v2: cannot create a group with memory.max under " + parent;
    return false;
  }
  out.version = CgroupVersion::v2;
  out.pids = true;
  out.memory = !swap_escapes(host, parent + "/memory.swap.max");
  out.cpu = cpu && can_create(host.ops, parent, "cpu.max");
  out.v2_dir = parent;
  out.evidence = "cgroup v2 under " + parent;
  if (!out.memory) out.evidence += unaccounted_swap("memory.swap.max");
  return true;
}

// v1 groups have no delegation subtleties: a group can be made where the directory of the
// controller's hierarchy is writable (each run makes its own and refuses if it cannot, so a
// cheap check is enough here; the limit files exist in every group but the root).
bool writable_v1(const std::string& dir) {
  return !dir.empty() && ::access(dir.c_str(), W_OK | X_OK) == 0 &&
         ::access((dir + "/cgroup.procs").c_str(), W_OK) == 0;
}

bool probe_v1(const CgroupHost& host, const Mounts& m, CgroupSupport& out) {
  auto dir_for = [&host](const std::string& mnt, const char* controller) {
    return mnt.empty() ? std::string() : mnt + own_group(host.self_cgroup, controller);
  };
  std::string memory = dir_for(m.memory, "memory"), pids = dir_for(m.pids, "pids"),
              cpu = dir_for(m.cpu, "cpu");
  out.memory = writable_v1(memory);
  bool swap = out.memory && swap_escapes(host, memory + "/memory.memsw.limit_in_bytes");
  out.memory = out.memory && !swap;
  out.pids = writable_v1(pids);
  out.cpu = writable_v1(cpu);
  if (!out.memory && !out.pids) {
    out.evidence =
        "no cgroup v1 memory or pids group can be created by uid " + std::to_string(::geteuid());
    if (swap) out.evidence += unaccounted_swap("memory.memsw.limit_in_bytes");
    out.cpu = false;
    return false;
  }
  out.version = CgroupVersion::v1;
  out.memory_dir = memory;
  out.pids_dir = pids;
  out.cpu_dir = cpu;
  std::string list = std::string(out.memory ? "memory " : "") + (out.pids ? "pids " : "") +
                     (out.cpu ? "cpu " : "");
  out.evidence =
      "cgroup v1 (" + list.substr(0, list.size() - 1) + ") under " + (out.memory ? memory : pids);
  if (swap) out.evidence += unaccounted_swap("memory.memsw.limit_in_bytes");
  return true;
}

}  // namespace

bool lists_swap(const std::string& proc_swaps) {
  // A header line, then one line per swap area.
  auto first = proc_swaps.find('\n');
  return first != std::string::npos &&
         proc_swaps.find_first_not_of(" \n", first) != std::string::npos;
}

const CgroupOps& kernel_cgroup_ops() {
  static const CgroupOps ops{
      [](const std::string& dir) { return ::mkdir(dir.c_str(), 0755) == 0 ? 0 : errno; },
      [](const std::string& dir) { return ::rmdir(dir.c_str()) == 0 ? 0 : errno; }};
  return ops;
}

CgroupHost kernel_cgroup_host() {
  return {read_text_or_empty("/proc/self/mountinfo"), read_text_or_empty("/proc/self/cgroup"),
          read_text_or_empty("/proc/swaps"), kernel_cgroup_ops()};
}

CgroupSupport probe_cgroups(uid_t euid) noexcept {
  CgroupSupport out;
  try {
    return probe_cgroups(euid, kernel_cgroup_host());
  } catch (...) {
    out.evidence = "cgroup discovery failed";
  }
  return out;
}

CgroupSupport probe_cgroups(uid_t euid, const CgroupHost& host) noexcept {
  CgroupSupport out;
  try {
    Mounts m = cgroup_text::mounts(host.mountinfo);
    if (probe_v2(host, m, euid, out)) return out;
    std::string v2_reason = out.evidence;
    if (probe_v1(host, m, out)) return out;
    if (!v2_reason.empty()) out.evidence = v2_reason + "; " + out.evidence;
  } catch (...) {
    out = CgroupSupport{};
    out.evidence = "cgroup discovery failed";
  }
  return out;
}

SandboxCgroup::SandboxCgroup(const CgroupSupport& s, const CgroupLimits& limits,
                             const CgroupOps& ops)
    : version_(s.version), ops_(ops) {
  try {
    create(s, limits);
  } catch (...) {
    remove();  // a constructor that throws gets no destructor
    throw;
  }
}

void SandboxCgroup::create(const CgroupSupport& s, const CgroupLimits& limits) {
  std::string name = unique_name("cordon-");
  // A group of this name already there was left by a cordon with this pid that was killed
  // (nothing of its sandbox is left to stop the removal of an empty group).
  auto make = [this](std::string& member, const std::string& dir) {
    int e = ops_.make_group(dir);
    if (e == EEXIST && ops_.remove_group(dir) == 0) e = ops_.make_group(dir);
    if (e != 0)
      throw Error(code::kIsolationFailed,
                  "cgroup: cannot create '" + dir + "': " + std::strerror(e));
    member = dir;
  };
  if (version_ == CgroupVersion::v2) {
    make(memory_, s.v2_dir + "/" + name);
    if (limits.memory_bytes) {
      must_write(memory_ + "/memory.max", std::to_string(*limits.memory_bytes));
      write_text(memory_ + "/memory.swap.max", "0");
    }
    if (limits.max_tasks) must_write(memory_ + "/pids.max", std::to_string(*limits.max_tasks));
    if (limits.cpu_percent)
      must_write(memory_ + "/cpu.max", std::to_string(*limits.cpu_percent * 1000) + " 100000");
    dir_fd_ = ::open(memory_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd_ < 0) throw Error(code::kIsolationFailed, "cgroup: cannot open '" + memory_ + "'");
    return;
  }
  if (limits.memory_bytes) {
    make(memory_, s.memory_dir + "/" + name);
    must_write(memory_ + "/memory.limit_in_bytes", std::to_string(*limits.memory_bytes));
    // Swap counts too when the kernel accounts it, so the limit cannot be dodged by swapping.
    write_text(memory_ + "/memory.memsw.limit_in_bytes", std::to_string(*limits.memory_bytes));
  }
  if (limits.max_tasks) {
    make(pids_, s.pids_dir + "/" + name);
    must_write(pids_ + "/pids.max", std::to_string(*limits.max_tasks));
  }
  if (limits.cpu_percent) {
    make(cpu_, s.cpu_dir + "/" + name);
    must_write(cpu_ + "/cpu.cfs_period_us", "100000");
    must_write(cpu_ + "/cpu.cfs_quota_us", std::to_string(*limits.cpu_percent * 1000));
  }
  const std::string* dirs[3] = {&memory_, &pids_, &cpu_};
  for (int i = 0; i < 3; ++i) {
    if (dirs[i]->empty()) continue;
    std::string tasks = *dirs[i] + "/tasks";
    task_fds_[i] = ::open(tasks.c_str(), O_WRONLY | O_CLOEXEC);
    if (task_fds_[i] < 0)
      throw Error(code::kIsolationFailed,
                  "cgroup: cannot open '" + tasks + "': " + std::strerror(errno));
  }
}

SandboxCgroup::~SandboxCgroup() { remove(); }

bool SandboxCgroup::remove_if_empty() noexcept { return remove(1); }

bool SandboxCgroup::remove(int attempts) noexcept {
  if (dir_fd_ >= 0) ::close(dir_fd_);
  dir_fd_ = -1;
  for (int* fd : {&task_fds_[0], &task_fds_[1], &task_fds_[2]}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
  bool gone = true;
  for (auto* dir : {&memory_, &pids_, &cpu_}) {
    if (dir->empty()) continue;
    // The last tasks may still be leaving the group for a moment after the keeper was reaped.
    for (int attempt = 0; attempt < attempts; ++attempt) {
      if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      int e = ops_.remove_group(*dir);
      if (e == 0 || e == ENOENT) {
        dir->clear();
        break;
      }
      if (e != EBUSY) break;
    }
    gone = gone && dir->empty();
  }
  return gone;
}

std::optional<std::uint64_t> SandboxCgroup::peak_memory() const {
  if (memory_.empty()) return std::nullopt;
  std::string text = read_text_or_empty(
      memory_ + (version_ == CgroupVersion::v2 ? "/memory.peak" : "/memory.max_usage_in_bytes"));
  if (text.empty()) return std::nullopt;
  try {
    return std::stoull(text);
  } catch (...) {
    return std::nullopt;
  }
}

std::optional<std::uint64_t> SandboxCgroup::oom_kills() const {
  if (memory_.empty()) return std::nullopt;
  // Only the kills count: "max" (v2) and failcnt (v1) also count the charges that reclaim
  // satisfied, e.g. page cache pushed out by a large write.
  const char* file = version_ == CgroupVersion::v2 ? "/memory.events" : "/memory.oom_control";
  return count_of(read_text_or_empty(memory_ + file), "oom_kill");
}

}  // namespace cordon::sdk
