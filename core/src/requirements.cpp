// Policy -> Requirements: which capabilities a backend must prove for a policy. Pure.
#include <cordon/sdk/capabilities.hpp>
#include <cordon/sdk/requirements.hpp>

#include <algorithm>

namespace cordon {

namespace {

std::string count_of(std::size_t n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

std::string ports_clause(const Network& net) {
  std::string out;
  if (!net.connect_ports.empty()) out += "network.connect_ports";
  if (!net.bind_ports.empty()) out += std::string(out.empty() ? "" : " + ") + "network.bind_ports";
  return out;
}

void filesystem_requirements(const Filesystem& fs, Requirements& out) {
  if (!fs.read_host) {
    out.push_back({std::string(cap::fs_read_confine),
                   "filesystem.read (" + count_of(fs.read.size(), "path") + ")"});
    // Reading another process's /proc entries is a read outside the confined set.
    out.push_back({std::string(cap::proc_isolate), "filesystem.read confines reads"});
  }
  if (!fs.blocked.empty())
    out.push_back({std::string(cap::fs_read_block),
                   "filesystem.blocked (" + count_of(fs.blocked.size(), "path") + ")"});
  if (!fs.write_host)
    out.push_back({std::string(cap::fs_write_confine),
                   "filesystem.write (" + count_of(fs.write.size(), "path") + ")"});
  if (fs.home == HomeMode::private_home)
    out.push_back({std::string(cap::home_private), "filesystem.home = \"private\""});
}

void network_requirements(const Network& net, Requirements& out) {
  if (net.allow) return;
  if (net.connect_ports.empty() && net.bind_ports.empty())
    out.push_back({std::string(cap::net_deny), "network.allow = false"});
  else
    out.push_back({std::string(cap::net_ports), ports_clause(net)});
  // Abstract unix sockets and SysV IPC reach host daemons without the network.
  out.push_back({std::string(cap::ipc_isolate), "network.allow = false"});
}

void limit_requirements(const Limits& l, Requirements& out) {
  auto add = [&out](std::string_view id, const std::string& clause) {
    out.push_back({std::string(id), clause});
  };
  if (l.memory_mb) add(cap::limit_memory, "limits.memory_mb = " + std::to_string(*l.memory_mb));
  if (l.max_processes)
    add(cap::limit_processes, "limits.max_processes = " + std::to_string(*l.max_processes));
  if (l.max_open_files)
    add(cap::limit_files, "limits.max_open_files = " + std::to_string(*l.max_open_files));
  if (l.cpu_seconds) add(cap::limit_cpu, "limits.cpu_seconds = " + std::to_string(*l.cpu_seconds));
  if (l.cpu_percent)
    add(cap::limit_cpu_share, "limits.cpu_percent = " + std::to_string(*l.cpu_percent));
  if (l.max_file_size_mb)
    add(cap::limit_file_size, "limits.max_file_size_mb = " + std::to_string(*l.max_file_size_mb));
  if (l.timeout)
    add(cap::limit_timeout, "limits.timeout = \"" + format_duration(*l.timeout) + "\"");
}

void process_requirements(const Process& p, Requirements& out) {
  if (!p.blocked_commands.empty())
    out.push_back(
        {std::string(cap::fs_exec_block),
         "process.blocked_commands (" + count_of(p.blocked_commands.size(), "program") + ")"});
  if (!p.allowed_commands.empty())
    out.push_back(
        {std::string(cap::fs_exec_confine),
         "process.allowed_commands (" + count_of(p.allowed_commands.size(), "program") + ")"});
  if (!p.allow_subprocess)
    out.push_back({std::string(cap::proc_no_subprocess), "process.allow_subprocess = false"});
}

}  // namespace

Requirements derive_requirements(const Policy& policy) {
  Requirements out;
  filesystem_requirements(policy.filesystem, out);
  network_requirements(policy.network, out);
  limit_requirements(policy.limits, out);
  process_requirements(policy.process, out);
  // Always: the environment is granted, and the command never holds host privileges.
  out.push_back({std::string(cap::env_grant), "the environment is granted, never inherited"});
  out.push_back({std::string(cap::identity_unprivileged), "commands never hold host privileges"});
  std::stable_sort(out.begin(), out.end(),
                   [](const Requirement& a, const Requirement& b) { return a.id < b.id; });
  out.erase(std::unique(out.begin(), out.end(),
                        [](const Requirement& a, const Requirement& b) { return a.id == b.id; }),
            out.end());
  return out;
}

std::vector<Advisory> advisory_clauses(const Policy& policy) {
  std::vector<Advisory> out;
  const auto& imports = policy.process.blocked_imports;
  if (!imports.empty())
    out.push_back({"process.blocked_imports (" + count_of(imports.size(), "module") + ")",
                   "no kernel can stop an import; cordon scan --policy reports them in a script"});
  return out;
}

std::string advisory_note(const Advisory& advisory) {
  return advisory.clause + " is advisory, not enforced: " + advisory.why;
}

bool requires_capability(const Requirements& reqs, std::string_view id) {
  return std::any_of(reqs.begin(), reqs.end(), [id](const Requirement& r) { return r.id == id; });
}

}  // namespace cordon
