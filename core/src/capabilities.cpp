// The list of known capability ids.
#include <cordon/sdk/capabilities.hpp>

namespace cordon::cap {

const std::vector<std::string_view>& all() {
  static const std::vector<std::string_view> ids = {
      fs_read_confine, fs_read_block, fs_write_confine, fs_exec_block,
      fs_exec_confine, net_deny,      net_ports,        limit_memory,
      limit_processes, limit_files,   limit_cpu,        limit_file_size,
      limit_cpu_share, limit_timeout, proc_isolate,     proc_no_subprocess,
      ipc_isolate,     env_grant,     home_private,     identity_unprivileged};
  return ids;
}

}  // namespace cordon::cap
