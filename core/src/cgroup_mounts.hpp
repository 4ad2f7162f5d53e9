// Where the cgroup hierarchies are mounted and which group this process is in: what cgroup
// discovery (cgroup.cpp) reads, and what a cached probe's directories are checked against
// (probe_cache_cgroups.cpp), parsed the same way for both. Pure: the callers read the files.
#pragma once

#include <cordon/sdk/export.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace cordon::sdk::cgroup_text {

/// The mount points of the cgroup hierarchies in `mountinfo` (/proc/self/mountinfo's text):
/// the first cgroup2 one, and the last v1 one holding each of memory, pids and cpu; "" where
/// there is none.
struct CgroupMounts {
  std::string v2, memory, pids, cpu;
};
CORDON_API CgroupMounts mounts(std::string_view mountinfo);

/// This process's group in the hierarchy of `controller` ("" for the v2 one), from
/// `self_cgroup` (/proc/self/cgroup's text); nullopt when no hierarchy lists it.
CORDON_API std::optional<std::string> own_group(std::string_view self_cgroup,
                                                std::string_view controller);

}  // namespace cordon::sdk::cgroup_text
