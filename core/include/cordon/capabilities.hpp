// The capability vocabulary: the contract between a policy and the backends.
#pragma once

#include <cordon/export.hpp>

#include <string_view>
#include <vector>

namespace cordon::cap {

inline constexpr std::string_view fs_read_confine = "fs.read.confine";
inline constexpr std::string_view fs_read_block = "fs.read.block";
inline constexpr std::string_view fs_write_confine = "fs.write.confine";
inline constexpr std::string_view fs_exec_block = "fs.exec.block";
inline constexpr std::string_view fs_exec_confine = "fs.exec.confine";
inline constexpr std::string_view net_deny = "net.deny";
inline constexpr std::string_view net_ports = "net.ports";
inline constexpr std::string_view limit_memory = "limit.memory";
inline constexpr std::string_view limit_processes = "limit.processes";
inline constexpr std::string_view limit_files = "limit.files";
inline constexpr std::string_view limit_cpu = "limit.cpu";
inline constexpr std::string_view limit_file_size = "limit.file_size";
inline constexpr std::string_view limit_cpu_share = "limit.cpu_share";
inline constexpr std::string_view limit_timeout = "limit.timeout";
inline constexpr std::string_view proc_isolate = "proc.isolate";
inline constexpr std::string_view proc_no_subprocess = "proc.no_subprocess";
inline constexpr std::string_view ipc_isolate = "ipc.isolate";
inline constexpr std::string_view env_grant = "env.grant";
inline constexpr std::string_view home_private = "home.private";
inline constexpr std::string_view identity_unprivileged = "identity.unprivileged";

/// Every id above, in the order of the design table.
CORDON_API const std::vector<std::string_view>& all();

}  // namespace cordon::cap
