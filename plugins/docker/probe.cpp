// The probe's questions to the daemon and the proofs drawn from the answers.
#include "probe.hpp"

#include <cordon/sdk/capabilities.hpp>

#include <boost/json/array.hpp>

#include "api.hpp"
#include "endpoint.hpp"
#include "seccomp_profile.hpp"

namespace cordon::docker {

namespace json = boost::json;

namespace {

bool flag(const json::object& info, const char* key) {
  const auto* v = info.if_contains(key);
  return v && v->is_bool() && v->get_bool();
}

void read_info(const json::object& info, ProbeFacts& f) {
  f.memory = flag(info, "MemoryLimit") && flag(info, "SwapLimit");
  f.pids = flag(info, "PidsLimit");
  f.cpu_quota = flag(info, "CpuCfsQuota");
  f.init = !string_member(info, "InitBinary").empty();
  f.cgroup_version = string_member(info, "CgroupVersion");
  if (const auto* so = info.if_contains("SecurityOptions"); so && so->is_array())
    for (const auto& o : so->get_array()) {
      if (!o.is_string()) continue;
      std::string_view s = o.get_string();
      f.userns = f.userns || s.find("name=userns") != std::string_view::npos;
      f.rootless = f.rootless || s.find("name=rootless") != std::string_view::npos;
      f.seccomp = f.seccomp || s.find("name=seccomp") != std::string_view::npos;
    }
  if (const auto* rt = info.if_contains("Runtimes"); rt && rt->is_object())
    for (const auto& kv : rt->get_object()) f.runtimes.emplace_back(kv.key());
}

}  // namespace

ProbeFacts gather_probe_facts(const Endpoint& ep) {
  ProbeFacts f;
  try {
    f.where = ep.display();
    Daemon daemon(ep);
    f.api = daemon.version().str();
    f.server = string_member(daemon.version_info(), "Version");
    f.arch = string_member(daemon.version_info(), "Arch");
    read_info(daemon.json("GET", "/info", code::kServiceUnreachable, "info"), f);
  } catch (const Error& e) {
    f.failure = e.what();
    f.error = e;
  } catch (const std::exception& e) {
    f.failure = e.what();
  }
  return f;
}

namespace {

// Why cordon's seccomp profile cannot be applied on this daemon, or "" when it can; `summary`
// gets the profile's counts.
std::string seccomp_refusal(const ProbeFacts& f, std::string& summary) {
  if (!f.seccomp)
    return "the docker daemon at " + f.where +
           " applies no seccomp profile (its build or kernel lacks seccomp), so cordon's "
           "system call denials cannot be applied";
  try {
    summary = seccomp_profile(f.arch)->summary();
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

}  // namespace

ProbeResult probe_result(const ProbeFacts& f) {
  ProbeResult r;
  std::string seccomp;
  r.reason = f.failure.empty() ? seccomp_refusal(f, seccomp) : f.failure;
  r.available = r.reason.empty();
  bool up = r.available;
  auto prove = [&r, up](std::string_view cap, bool ok, std::string evidence) {
    r.proofs.push_back({std::string(cap), up && ok, up || !ok ? std::move(evidence) : ""});
  };
  std::string daemon = "daemon at " + f.where + " answered API " + f.api;
  prove(cap::fs_read_confine, true,
        daemon +
            ": the command sees the image's read-only root; of the host only the workspace, "
            "filesystem.write paths and backends.docker.mounts are mounted");
  prove(cap::fs_read_block, true,
        "blocked paths inside a mounted host path are masked by an empty mode-000 read-only "
        "bind; the rest of the host is not mounted at all");
  prove(cap::fs_write_confine, true,
        "read-only root filesystem; writable only: the workspace, filesystem.write binds, a "
        "private /tmp and HOME");
  prove(cap::fs_exec_block, true,
        "each blocked program's file in the image (through PATH and links, stat'ed by the daemon "
        "in a container never started, cached per image) masked by an empty mode-000 bind; a "
        "link to a multi-call program is refused (CRD1003)");
  prove(cap::fs_exec_confine, false, "not enforced: docker has no per-program exec allow-list");
  prove(cap::net_deny, true, "NetworkMode none: a network namespace with only loopback");
  prove(cap::net_ports, false, "not enforceable: plain docker has no per-port egress filter");
  prove(cap::limit_memory, f.memory,
        f.memory ? "cgroup v" + f.cgroup_version + " memory limit, swap equal (no swap)"
                 : "the daemon reports no memory or swap limit support");
  prove(cap::limit_processes, f.pids,
        f.pids ? "cgroup pids limit for the whole container" : "the daemon reports no pids limit");
  prove(cap::limit_files, true, "RLIMIT_NOFILE (Ulimits nofile)");
  prove(cap::limit_cpu, true, "RLIMIT_CPU per process (Ulimits cpu)");
  prove(cap::limit_file_size, true, "RLIMIT_FSIZE (Ulimits fsize)");
  prove(cap::limit_cpu_share, f.cpu_quota,
        f.cpu_quota ? "CFS quota (NanoCpus)" : "the daemon reports no CFS quota support");
  prove(cap::limit_timeout, true,
        "the container is killed at the deadline (its pid namespace ends with its pid 1) and "
        "removed");
  prove(cap::proc_isolate, true, "a pid namespace of its own");
  prove(cap::proc_no_subprocess, false,
        "not enforced: cordon's waiter (the container's pid 1) must fork and exec before the "
        "command, under the same seccomp profile");
  prove(cap::ipc_isolate, true,
        "IpcMode private; a network namespace of its own (abstract unix sockets)");
  prove(cap::env_grant, true,
        "Env holds the granted variables and HOME; the image's other ENV names are removed "
        "(the daemon adds HOSTNAME, and PATH when none is granted)");
  prove(cap::home_private, true, std::string("HOME=") + "/home/cordon, an empty 0700 tmpfs");
  prove(cap::identity_unprivileged, true,
        "a non-root user, CapDrop ALL, no-new-privileges" +
            std::string(f.userns ? "; user namespace remap" : "") +
            (f.rootless ? "; rootless daemon" : ""));
  if (!up) return r;
  r.facts.push_back("docker " + f.server + " at " + f.where + ", API " + f.api);
  r.facts.push_back(std::string("user namespace remap: ") + (f.userns ? "yes" : "no") +
                    "; rootless: " + (f.rootless ? "yes" : "no"));
  std::string runtimes;
  for (const auto& rt : f.runtimes) runtimes += (runtimes.empty() ? "" : ", ") + rt;
  r.facts.push_back("runtimes: " + runtimes);
  r.facts.push_back("seccomp: " + seccomp + " (" + f.arch + ")");
  return r;
}

}  // namespace cordon::docker
