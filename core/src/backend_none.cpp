// The `none` backend: its probe, which proves only what a plain child process enforces.
#include <cordon/sdk/child.hpp>

#include "backend_none.hpp"

#include <sys/stat.h>
#include <unistd.h>
#include <cordon/sdk/capabilities.hpp>

#include <cstdlib>
#include <fstream>
#include <map>

namespace cordon {

std::unique_ptr<Backend> make_none_backend(BackendContext context) {
  return std::make_unique<detail::NoneBackend>(std::move(context));
}

namespace detail {

namespace fs = std::filesystem;

namespace {

// What a plain child process leaves to the host, one line per capability it cannot prove.
const std::map<std::string_view, const char*>& not_enforced() {
  static const std::map<std::string_view, const char*> lines = {
      {cap::fs_read_confine, "a plain child process reads whatever the invoking user can"},
      {cap::fs_read_block, "a plain child process reads whatever the invoking user can"},
      {cap::fs_write_confine, "a plain child process writes wherever the invoking user can"},
      {cap::fs_exec_block, "a plain child process executes whatever the invoking user can"},
      {cap::fs_exec_confine, "a plain child process executes whatever the invoking user can"},
      {cap::net_deny, "a plain child process shares the host's network"},
      {cap::net_ports, "a plain child process shares the host's network"},
      {cap::ipc_isolate, "a plain child process shares the host's IPC and abstract sockets"},
      {cap::proc_isolate, "a plain child process sees and signals the user's other processes"},
      {cap::proc_no_subprocess, "nothing stops a plain child process from starting others"},
      {cap::limit_memory, "RLIMIT_AS bounds each process, not the sandbox's total"},
      {cap::limit_processes, "RLIMIT_NPROC counts every process of the user, not the sandbox's"},
      {cap::limit_cpu_share, "no CPU scheduler control without a cgroup"},
  };
  return lines;
}

// A fresh private directory, checked for mode 0700, then removed: what every run will do.
bool private_home_works(std::string& evidence) {
  std::error_code ec;
  fs::path tmp = fs::temp_directory_path(ec);
  std::string templ = ((ec ? fs::path("/tmp") : tmp) / "cordon-probe-XXXXXX").string();
  if (!::mkdtemp(templ.data())) {
    evidence = "cannot create a private directory under '" + tmp.string() + "'";
    return false;
  }
  struct stat st {};
  bool ok = ::stat(templ.c_str(), &st) == 0 && (st.st_mode & 0777) == 0700;
  ::rmdir(templ.c_str());
  evidence =
      ok ? "HOME is a fresh 0700 directory under '" + tmp.string() + "', removed after the run"
         : "a fresh directory under '" + tmp.string() + "' is not mode 0700";
  return ok;
}

// Non-zero capability sets of this process, from /proc/self/status.
std::string held_capabilities() {
  std::ifstream status("/proc/self/status");
  std::string line, held;
  while (std::getline(status, line)) {
    for (const char* set : {"CapEff:", "CapPrm:", "CapAmb:"}) {
      if (line.rfind(set, 0) != 0) continue;
      auto value = line.substr(std::string(set).size());
      if (value.find_first_not_of("0\t ") != std::string::npos)
        held += (held.empty() ? "" : ", ") + line;
    }
  }
  return held;
}

bool unprivileged(std::string& evidence) {
  uid_t uid = ::geteuid();
  if (uid == 0) {
    evidence = "cordon runs as uid 0: the command would run as root";
    return false;
  }
  if (auto held = held_capabilities(); !held.empty()) {
    evidence = "cordon holds capabilities the command could inherit (" + held + ")";
    return false;
  }
  evidence = "runs as uid " + std::to_string(uid) +
             " without capabilities; no_new_privs stops setuid programs";
  return true;
}

}  // namespace

ProbeResult NoneBackend::do_probe() noexcept {
  ProbeResult r;
  r.available = true;
  auto add = [&r](std::string_view id, bool proven, std::string evidence) {
    r.proofs.push_back({std::string(id), proven, std::move(evidence)});
  };
  std::string evidence;
  add(cap::env_grant, true, "execve() receives only the granted variables");
  bool home = private_home_works(evidence);
  add(cap::home_private, home, evidence);
  add(cap::limit_files, true, "RLIMIT_NOFILE on every process of the command");
  add(cap::limit_cpu, true, "RLIMIT_CPU on every process of the command");
  add(cap::limit_file_size, true, "RLIMIT_FSIZE on every process of the command");
  bool reaper = sdk::child_supervision_supported(evidence);
  add(cap::limit_timeout, reaper, evidence);
  bool plain = unprivileged(evidence);
  add(cap::identity_unprivileged, plain, evidence);
  for (const auto& [id, line] : not_enforced()) add(id, false, line);
  r.facts.push_back("a plain child process: no filesystem, network or process isolation");
  return r;
}

}  // namespace detail

}  // namespace cordon
