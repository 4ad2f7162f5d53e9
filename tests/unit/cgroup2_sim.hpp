// A simulated cgroup2 hierarchy in a temporary directory, laid out as the kernel lays one out:
// each group holds the interface files of the controllers its parent enables for its children,
// and a group with tasks or children cannot be removed. It lets the cgroup code's v2 path run
// on a host without cgroup v2 (or without a delegated subtree), through the same functions.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include <cordon/sdk/cgroup.hpp>

namespace cordon::sdk::test {

class Cgroup2Sim {
 public:
  /// A hierarchy whose root offers `controllers` ("cpu memory pids") to its children.
  explicit Cgroup2Sim(const std::string& controllers = "cpuset cpu io memory hugetlb pids");
  ~Cgroup2Sim();
  Cgroup2Sim(const Cgroup2Sim&) = delete;
  Cgroup2Sim& operator=(const Cgroup2Sim&) = delete;

  /// The mount point (the hierarchy's root directory).
  const std::string& root() const { return root_; }
  /// The directory of group `path` ("/user.slice"; "" is the root).
  std::string dir(const std::string& path) const { return root_ + path; }

  /// Makes the groups of `path` that are missing, parents first, each of them enabling
  /// `subtree_control` for its children, as systemd sets up a slice or a delegated service.
  void add_groups(const std::string& path, const std::string& subtree_control);
  /// Hands the group `path` over to `uid` as systemd's Delegate=yes does: the directory and its
  /// cgroup.procs, cgroup.subtree_control and cgroup.threads. Only root can give it away;
  /// anyone may "give" it to themselves (a no-op).
  void delegate(const std::string& path, uid_t uid);

  /// Whether memory.swap.max exists in new groups (the kernel's swap accounting).
  void set_swap_accounting(bool on) { swap_accounting_ = on; }

  /// What a process whose group is `path` reads: /proc/self/mountinfo and /proc/self/cgroup,
  /// /proc/swaps with or without a swap area, and mkdir/rmdir with the kernel's effects.
  CgroupHost host(const std::string& path, bool swap_on = false) const;

  /// The text of file `name` in group directory `dir`; "" when absent.
  static std::string read(const std::string& dir, const std::string& name);
  /// Replaces the text of file `name` in `dir`, as the kernel updates a counter.
  static void write(const std::string& dir, const std::string& name, const std::string& text);

  /// The kernel's mkdir(2) in a cgroup2 hierarchy: the new group's files. 0 or an errno.
  int make_group(const std::string& dir) const;
  /// The kernel's rmdir(2): EBUSY while tasks or child groups are in it. 0 or an errno.
  int remove_group(const std::string& dir) const;

 private:
  std::string base_;  ///< the temporary directory (holding root_)
  std::string root_;
  bool swap_accounting_ = true;
};

/// The controllers a group's `cgroup.subtree_control` text enables: "+memory +pids" (as
/// written, the simulation keeps the writes) or "memory pids" (as the kernel shows it).
std::vector<std::string> enabled_controllers(const std::string& subtree_control);

}  // namespace cordon::sdk::test
