// The simulated cgroup2 hierarchy: files as a 6.x kernel shows them in a fresh group.
#include "cgroup2_sim.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

namespace cordon::sdk::test {

namespace fs = std::filesystem;

namespace {

// The interface files of a non-root group, per controller, with their initial contents.
const std::map<std::string, std::vector<std::pair<std::string, std::string>>>& controller_files() {
  static const std::map<std::string, std::vector<std::pair<std::string, std::string>>> files = {
      {"memory",
       {{"memory.max", "max\n"},
        {"memory.high", "max\n"},
        {"memory.current", "0\n"},
        {"memory.peak", "0\n"},
        {"memory.events", "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n"},
        {"memory.stat", "anon 0\nfile 0\n"}}},
      {"pids", {{"pids.max", "max\n"}, {"pids.current", "0\n"}, {"pids.events", "max 0\n"}}},
      {"cpu",
       {{"cpu.max", "max 100000\n"}, {"cpu.weight", "100\n"}, {"cpu.stat", "usage_usec 0\n"}}},
      {"io", {{"io.max", ""}, {"io.stat", ""}}},
  };
  return files;
}

// The files every group has, whatever its controllers.
const std::vector<std::pair<std::string, std::string>>& core_files() {
  static const std::vector<std::pair<std::string, std::string>> files = {
      {"cgroup.procs", ""},
      {"cgroup.threads", ""},
      {"cgroup.subtree_control", ""},
      {"cgroup.events", "populated 0\nfrozen 0\n"},
      {"cgroup.type", "domain\n"},
      {"cgroup.kill", ""},
      {"cgroup.freeze", "0\n"},
      {"cgroup.max.depth", "max\n"},
      {"cgroup.max.descendants", "max\n"},
      {"cgroup.stat", "nr_descendants 0\nnr_dying_descendants 0\n"},
  };
  return files;
}

bool is_dir(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

}  // namespace

std::vector<std::string> enabled_controllers(const std::string& subtree_control) {
  std::vector<std::string> on;
  std::istringstream in(subtree_control);
  std::string word;
  while (in >> word) {
    char sign = word.front();
    std::string name = sign == '+' || sign == '-' ? word.substr(1) : word;
    auto at = std::find(on.begin(), on.end(), name);
    if (sign == '-' && at != on.end()) on.erase(at);
    if (sign != '-' && at == on.end()) on.push_back(name);
  }
  return on;
}

Cgroup2Sim::Cgroup2Sim(const std::string& controllers) {
  std::string tmpl = fs::temp_directory_path().string() + "/cordon-cgroup2-XXXXXX";
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("cannot make a temporary directory");
  base_ = tmpl;
  ::chmod(base_.c_str(), 0755);
  root_ = base_ + "/cgroup";
  fs::create_directory(root_);
  // The root group: no limit files of its own, every controller the kernel has.
  for (const auto& [name, text] : core_files())
    if (name != "cgroup.type" && name != "cgroup.kill" && name != "cgroup.freeze")
      write(root_, name, text);
  write(root_, "cgroup.controllers", controllers + "\n");
}

Cgroup2Sim::~Cgroup2Sim() {
  std::error_code ec;
  fs::remove_all(base_, ec);
}

int Cgroup2Sim::make_group(const std::string& dir) const {
  std::string parent = fs::path(dir).parent_path().string();
  if (!is_dir(parent)) return ENOENT;
  if (::access(parent.c_str(), W_OK) != 0) return EACCES;
  if (::mkdir(dir.c_str(), 0755) != 0) return errno;
  // A child sees the controllers that its parent has and enables for it.
  auto offered = enabled_controllers(read(parent, "cgroup.controllers"));
  std::vector<std::string> on;
  for (const auto& c : enabled_controllers(read(parent, "cgroup.subtree_control")))
    if (std::find(offered.begin(), offered.end(), c) != offered.end()) on.push_back(c);
  for (const auto& [name, text] : core_files()) write(dir, name, text);
  write(dir, "cgroup.controllers", join(on) + (on.empty() ? "" : "\n"));
  for (const auto& c : on) {
    auto files = controller_files().find(c);
    if (files == controller_files().end()) continue;
    for (const auto& [name, text] : files->second) {
      if (name == "memory.max" && swap_accounting_) write(dir, "memory.swap.max", "max\n");
      write(dir, name, text);
    }
  }
  return 0;
}

int Cgroup2Sim::remove_group(const std::string& dir) const {
  if (!is_dir(dir)) return ENOENT;
  std::string procs = read(dir, "cgroup.procs");
  if (procs.find_first_not_of(" \n") != std::string::npos) return EBUSY;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_directory()) return EBUSY;
  // The interface files go with the group: they are not the caller's to remove one by one.
  for (const auto& entry : fs::directory_iterator(dir)) fs::remove(entry.path());
  return ::rmdir(dir.c_str()) == 0 ? 0 : errno;
}

void Cgroup2Sim::add_groups(const std::string& path, const std::string& subtree_control) {
  std::string at;
  std::istringstream in(path);
  std::string part;
  while (std::getline(in, part, '/')) {
    if (part.empty()) continue;
    at += "/" + part;
    if (is_dir(dir(at))) continue;
    if (make_group(dir(at)) != 0) throw std::runtime_error("cannot make simulated group " + at);
    write(dir(at), "cgroup.subtree_control", subtree_control + "\n");
  }
}

void Cgroup2Sim::delegate(const std::string& path, uid_t uid) {
  if (uid == ::geteuid()) return;
  std::string d = dir(path);
  for (const char* name : {"", "/cgroup.procs", "/cgroup.subtree_control", "/cgroup.threads"})
    if (::chown((d + name).c_str(), uid, static_cast<gid_t>(-1)) != 0)
      throw std::runtime_error("cannot delegate " + d + name);
}

CgroupHost Cgroup2Sim::host(const std::string& path, bool swap_on) const {
  CgroupHost h;
  // Mount id, parent id, major:minor, root, mount point, options - type source super options.
  h.mountinfo =
      "22 1 0:21 / / rw,relatime - ext4 /dev/vda1 rw\n"
      "35 22 0:30 / " +
      root_ + " rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw\n";
  h.self_cgroup = "0::" + path + "\n";
  h.swaps = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n";
  if (swap_on) h.swaps += "/swapfile                               file\t\t1048572\t\t0\t\t-2\n";
  h.ops.make_group = [this](const std::string& d) { return make_group(d); };
  h.ops.remove_group = [this](const std::string& d) { return remove_group(d); };
  return h;
}

std::string Cgroup2Sim::read(const std::string& dir, const std::string& name) {
  std::ifstream in(dir + "/" + name);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void Cgroup2Sim::write(const std::string& dir, const std::string& name, const std::string& text) {
  std::ofstream(dir + "/" + name, std::ios::trunc) << text;
}

}  // namespace cordon::sdk::test
