// The enforcement report. Pure.
#include "report.hpp"

#include <cordon/sdk/capabilities.hpp>

#include <algorithm>

namespace cordon::docker {

namespace {

std::string mounts_line(const ContainerSpec& spec) {
  std::string out;
  for (const auto& m : spec.mounts)
    if (m.why != kPinWhy)
      out += (out.empty() ? "" : ", ") + m.target + (m.writable ? " (rw)" : " (ro)");
  return out.empty() ? "none" : out;
}

// What the command may write: the writable mounts and the private tmpfs.
std::string writable_line(const ContainerSpec& spec) {
  std::string out;
  for (const auto& m : spec.mounts)
    if (m.writable && m.why != kPinWhy) out += (out.empty() ? "" : ", ") + m.target;
  std::string tmpfs = spec.private_tmp && spec.private_home ? "the private /tmp and HOME"
                      : spec.private_tmp                    ? "the private /tmp"
                      : spec.private_home                   ? "the private HOME"
                                                            : "";
  if (out.empty()) return tmpfs.empty() ? "nothing" : tmpfs;
  return tmpfs.empty() ? out : out + ", " + tmpfs;
}

std::string list(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

std::string exec_line(const ContainerSpec& spec) {
  if (spec.exec_masked.empty() && spec.mount_exec_masked.empty())
    return "no blocked program is in the image or on a host mount";
  std::string out = "blocked program files masked by an empty mode-000 bind:";
  if (!spec.exec_masked.empty()) out += " in the image " + list(spec.exec_masked);
  if (!spec.exec_masked.empty() && !spec.mount_exec_masked.empty()) out += ";";
  if (!spec.mount_exec_masked.empty()) out += " on host mounts " + list(spec.mount_exec_masked);
  return out;
}

// cordon's own state, hidden whatever the policy grants.
std::string own_state_line(const ContainerSpec& spec) {
  if (spec.hidden.empty()) return "; cordon's own state is not in any mount";
  return "; cordon's own state hidden by the same masks: " + list(spec.hidden);
}

std::string limit(const Plan& plan, std::string_view id, const ContainerSpec& spec) {
  const Limits& l = plan.policy.limits;
  if (id == cap::limit_memory && l.memory_mb)
    return "cgroup memory limit " + std::to_string(*l.memory_mb) + " MiB, swap equal (no swap)";
  if (id == cap::limit_processes)
    return "cgroup pids limit " + std::to_string(spec.pids_limit) + " (the command's " +
           std::to_string(spec.pids_limit - 1) + " and the init)";
  if (id == cap::limit_files && l.max_open_files)
    return "RLIMIT_NOFILE " + std::to_string(*l.max_open_files);
  if (id == cap::limit_cpu && l.cpu_seconds)
    return "RLIMIT_CPU " + std::to_string(*l.cpu_seconds) + " s per process";
  if (id == cap::limit_file_size && l.max_file_size_mb)
    return "RLIMIT_FSIZE " + std::to_string(*l.max_file_size_mb) + " MiB";
  if (id == cap::limit_cpu_share && l.cpu_percent)
    return "CFS quota of " + std::to_string(*l.cpu_percent) + "% of one CPU";
  return "not enforced";
}

std::string mechanism(const Plan& plan, std::string_view id, const ContainerSpec& spec,
                      const std::string& user, const std::string& api) {
  if (id == cap::fs_read_confine)
    return "the image's read-only root; host paths mounted: " + mounts_line(spec);
  if (id == cap::fs_read_block)
    return std::to_string(spec.masked.size()) +
           " blocked path(s) inside a mount masked by an empty mode-000 bind; the others are not "
           "mounted" +
           own_state_line(spec);
  if (id == cap::fs_write_confine)
    return "read-only root; writable: " + writable_line(spec) +
           (spec.private_tmp ? "" : "; /tmp is the host's");
  if (id == cap::fs_exec_block) return exec_line(spec);
  if (id == cap::net_deny) return "NetworkMode none (only loopback)";
  if (id.rfind("limit.", 0) == 0 && id != cap::limit_timeout) return limit(plan, id, spec);
  if (id == cap::limit_timeout)
    return "the waiter (pid 1) kills every process of the container at the deadline itself, and "
           "cordon kills the container and removes it";
  if (id == cap::proc_isolate) return "a pid namespace of its own, with the daemon's init";
  if (id == cap::ipc_isolate) return "IpcMode private; a network namespace of its own";
  if (id == cap::env_grant)
    return std::to_string(plan.env.size() + (plan.env.count("HOME") ? 0 : 1)) +
           " granted variables and HOME; " + std::to_string(spec.removed_env.size()) +
           " image ENV name(s) removed; the daemon adds HOSTNAME";
  if (id == cap::home_private) return "HOME=" + spec.home + ": an empty 0700 tmpfs";
  if (id == cap::identity_unprivileged)
    return "user " + user + ", CapDrop ALL, no-new-privileges" +
           (spec.seccomp.empty() ? "" : ", cordon's seccomp profile") + " (API " + api + ")";
  return "not known to this backend";
}

}  // namespace

std::vector<Enforcement> enforcement_report(const Plan& plan, const ContainerSpec& spec,
                                            const std::string& user, const std::string& api) {
  std::vector<Enforcement> out;
  for (const auto& r : plan.requirements)
    out.push_back({r.id, mechanism(plan, r.id, spec, user, api)});
  // Not a capability of the policy's: cordon's denials hold for every run.
  if (!spec.seccomp.empty()) out.push_back({"sys.deny", "seccomp profile (" + spec.seccomp + ")"});
  // cordon's own state is hidden for every run, blocked paths or not.
  bool listed = std::any_of(out.begin(), out.end(), [](const Enforcement& e) {
    return e.capability == cap::fs_read_block;
  });
  if (!listed && !spec.hidden.empty())
    out.push_back({std::string(cap::fs_read_block),
                   "cordon's own state hidden by an empty mode-000 bind: " + list(spec.hidden)});
  return out;
}

}  // namespace cordon::docker
