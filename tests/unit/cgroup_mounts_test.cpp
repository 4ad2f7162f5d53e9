// The cgroup mounts and own groups that discovery and the probe cache's check both read
// (core/src/cgroup_mounts.hpp), parsed from the texts of /proc/self/mountinfo and
// /proc/self/cgroup.
#include <catch2/catch.hpp>

#include "cgroup_mounts.hpp"

using cordon::sdk::cgroup_text::mounts;
using cordon::sdk::cgroup_text::own_group;

namespace {

// A v1-hybrid host's mounts, with the memory hierarchy mounted twice (a bind of it, as a
// container runtime makes) and the cpu one shared with cpuacct.
const char* const kMountinfo =
    "21 26 0:20 / /proc rw,relatime - proc proc rw\n"
    "26 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
    "30 25 0:26 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
    "31 25 0:27 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory\n"
    "32 25 0:28 / /sys/fs/cgroup/pids rw,nosuid - cgroup cgroup rw,pids\n"
    "33 25 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid - cgroup cgroup rw,cpu,cpuacct\n"
    "34 25 0:30 / /sys/fs/cgroup/cpuset rw,nosuid - cgroup cgroup rw,cpuset\n"
    "40 26 0:27 / /mnt/memory rw,nosuid - cgroup cgroup rw,memory";  // no final newline

}  // namespace

TEST_CASE("cgroup mounts: the v2 mount and each v1 controller's, as discovery finds them",
          "[cgroups]") {
  auto m = mounts(kMountinfo);
  CHECK(m.v2 == "/sys/fs/cgroup/unified");
  CHECK(m.memory == "/mnt/memory");  // the last line wins, the one without a newline too
  CHECK(m.pids == "/sys/fs/cgroup/pids");
  CHECK(m.cpu == "/sys/fs/cgroup/cpu,cpuacct");  // "cpuacct" or "cpuset" alone is not cpu
  auto none = mounts("26 1 254:0 / / rw - ext4 /dev/vda rw\nno dash here\n");
  CHECK(none.v2.empty());
  CHECK(none.memory.empty());
  CHECK(none.pids.empty());
  CHECK(none.cpu.empty());
}

TEST_CASE("cgroup mounts: this process's group in each hierarchy", "[cgroups]") {
  const char* groups =
      "9:cpu,cpuacct:/a/b\n"
      "8:pids:/p\n"
      "7:memory:/m/x\n"
      "6:cpuset:/\n"
      "0::/user.slice/u.scope";
  CHECK(own_group(groups, "cpu") == "/a/b");
  CHECK(own_group(groups, "cpuacct") == "/a/b");
  CHECK(own_group(groups, "pids") == "/p");
  CHECK(own_group(groups, "memory") == "/m/x");
  CHECK(own_group(groups, "") == "/user.slice/u.scope");
  CHECK_FALSE(own_group(groups, "cpus").has_value());
  CHECK_FALSE(own_group("8:pids:/p\nbroken line\n", "").has_value());
  CHECK_FALSE(own_group("", "memory").has_value());
}
