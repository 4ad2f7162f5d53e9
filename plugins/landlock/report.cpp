// The enforcement report. Pure.
#include "report.hpp"

#include <cordon/sdk/capabilities.hpp>

#include <algorithm>
#include <string>

namespace cordon::landlock {

namespace {

std::string list(const std::vector<std::string>& items, std::size_t most = 4) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < most; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > most) out += ", +" + std::to_string(items.size() - most) + " more";
  return out;
}

std::string ports(const RulesetPlan& r, std::uint64_t access) {
  std::vector<std::string> out;
  for (const auto& [port, a] : r.ports)
    if (a & access) out.push_back(std::to_string(port));
  return out.empty() ? "none" : list(out, 16);
}

std::string limit_line(const LimitsPlan& limits, std::string_view id) {
  for (const auto& [cap, how] : limits.mechanisms)
    if (cap == id) return how;
  return "not enforced";
}

std::vector<std::string> paths(const std::vector<HostPath>& in) {
  std::vector<std::string> out;
  for (const auto& p : in) out.push_back(p.path);
  return out;
}

std::size_t masked(const Layout& layout, const std::vector<HostPath>& objects) {
  std::size_t n = 0;
  for (const auto& o : objects)
    n += std::find(layout.masks.begin(), layout.masks.end(), Mask{o.path, o.dir, 0, 0}) !=
         layout.masks.end();
  return n;
}

std::string own_state_line(const HostView& v) {
  std::string out;
  if (!v.own_state.empty()) out = "cordon's own state kept out: " + list(paths(v.own_state));
  if (!v.unreachable.empty())
    out += (out.empty() ? "" : "; ") + std::string("out of the command's user's reach already: ") +
           list(v.unreachable);
  return out;
}

std::string blocked_line(const RunSetup& s) {
  std::string line = std::to_string(masked(s.layout, s.view.blocked)) + " of the " +
                     std::to_string(s.view.blocked.size()) +
                     " blocked paths present here are in the sandbox's tree, each masked by an "
                     "empty read-only mode-000 mount on the object resolved (checked again when "
                     "mounted); the others are not in the tree at all";
  if (!s.view.blocked_missing.empty())
    line += "; not present here: " + list(s.view.blocked_missing);
  if (!s.view.aliases.empty())
    line += "; " + std::to_string(masked(s.layout, s.view.aliases)) +
            " other mount(s) showing them masked too";
  if (!s.layout.pins.empty())
    line += "; " + std::to_string(s.layout.pins.size()) +
            " of their directories inside write grants are mount points the command cannot "
            "rename or remove";
  if (auto own = own_state_line(s.view); !own.empty()) line += "; " + own;
  return line;
}

std::string mechanism(const RunSetup& s, std::string_view id) {
  const std::string ll = "Landlock ABI " + std::to_string(s.ruleset.abi);
  if (id == cap::fs_read_confine)
    return ll + " read rules on " + std::to_string(s.view.read.size() + s.view.write.size() + 1) +
           " paths; the mount namespace holds only them, /tmp, /dev, /proc and HOME";
  if (id == cap::fs_read_block) return blocked_line(s);
  if (id == cap::fs_write_confine) {
    std::size_t others = 0;
    for (const auto& w : s.view.write) others += w.path != s.view.workspace.path;
    std::string where =
        s.view.workspace_writable
            ? " write rights only on the workspace" +
                  (others == 0 ? std::string()
                               : ", " + std::to_string(others) + " more write path(s)")
            : " write rights only on " + std::to_string(others) +
                  " write path(s); the workspace is read-only (no write grant "
                  "covers it)";
    return ll + where + (s.layout.private_tmp ? ", the private /tmp" : "") +
           (s.layout.home_kind != HomeKind::host ? " and the private HOME" : "") +
           "; other binds are read-only mounts" +
           (s.layout.read_host ? "; the host's /run (session buses, daemons' sockets) is not "
                                 "in the tree"
                               : "");
  }
  if (id == cap::fs_exec_block)
    return s.view.blocked_exec.empty()
               ? "no blocked program exists on this host"
               : "program files masked (mode 000, read-only): " + list(paths(s.view.blocked_exec));
  if (id == cap::fs_exec_confine) return ll + " EXECUTE only on " + list(s.view.allowed_exec);
  if (id == cap::net_deny) return "network namespace with only loopback";
  if (id == cap::net_ports)
    return ll + " TCP rules (connect: " + ports(s.ruleset, right::net_connect_tcp) +
           "; bind: " + ports(s.ruleset, right::net_bind_tcp) +
           "); seccomp refuses UDP, raw and non-TCP inet sockets";
  if (id == cap::limit_memory || id == cap::limit_processes || id == cap::limit_files ||
      id == cap::limit_cpu || id == cap::limit_file_size || id == cap::limit_cpu_share)
    return limit_line(s.limits, id);
  if (id == cap::limit_timeout)
    return "the pid namespace's init (the keeper) is killed at the deadline; the kernel kills the "
           "rest";
  if (id == cap::proc_isolate)
    return "pid namespace with a fresh /proc" +
           std::string(s.ruleset.scoped & right::scope_signal ? "; Landlock signal scope" : "");
  if (id == cap::proc_no_subprocess)
    return "seccomp: fork, vfork and clone without CLONE_THREAD fail with EPERM";
  if (id == cap::ipc_isolate)
    return "IPC namespace" +
           std::string(s.network_namespace ? "; network namespace (abstract unix sockets)" : "") +
           (s.ruleset.scoped & right::scope_abstract_unix ? "; Landlock abstract unix socket scope"
                                                          : "");
  if (id == cap::env_grant)
    return "exactly " + std::to_string(s.plan.env.size() + (s.plan.env.count("HOME") ? 0 : 1)) +
           " variables: the granted ones and HOME";
  if (id == cap::home_private)
    return "HOME=" + s.layout.home +
           (s.layout.home_kind == HomeKind::tmpfs ? ": an empty 0700 tmpfs over the host's home"
                                                  : ": an empty 0700 directory on the sandbox's "
                                                    "root tmpfs");
  if (id == cap::identity_unprivileged)
    return "user namespace mapping only host uid " + std::to_string(s.identity.uid) + " (" +
           s.identity.reason + "); no capabilities after exec; no_new_privs";
  return "not known to this backend";
}

}  // namespace

std::vector<Enforcement> enforcement_report(const RunSetup& setup) {
  std::vector<Enforcement> out;
  bool blocks = false;
  for (const auto& r : setup.plan.requirements) {
    out.push_back({r.id, mechanism(setup, r.id)});
    blocks = blocks || r.id == cap::fs_read_block;
  }
  // cordon's own state is hidden whatever the policy asks: said even when it blocks nothing.
  if (!blocks)
    if (auto own = own_state_line(setup.view); !own.empty())
      out.push_back({std::string(cap::fs_read_block), own});
  return out;
}

}  // namespace cordon::landlock
