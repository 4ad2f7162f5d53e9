// What the canary's findings prove (canary_proofs.hpp).
#include "canary_proofs.hpp"

#include <cordon/sdk/capabilities.hpp>
#include <cordon/sdk/child.hpp>

#include <string_view>

namespace cordon::seatbelt {

namespace {

void prove(ProbeResult& r, std::string_view id, bool proven, std::string evidence) {
  r.proofs.push_back({std::string(id), proven, std::move(evidence)});
}

// A proof that one of the canary's checks decides: `found` is what went wrong, "" if nothing.
void prove_by(ProbeResult& r, std::string_view id, const std::string& canary,
              const std::string& found, const std::string& held) {
  r.proofs.push_back(
      {std::string(id), found.empty(), canary + ": " + (found.empty() ? held : found)});
}

}  // namespace

void prove_canary(ProbeResult& r, const std::string& launcher, const CanaryFindings& found) {
  const std::string canary = "the canary through " + launcher;
  const std::string unchecked = "not checked by the canary";
  prove_by(r, cap::fs_read_confine, canary, found.reads,
           "with reads confined to the grants, a file in the grant was read and one outside it "
           "was not");
  prove_by(r, cap::fs_read_block, canary, found.names_read,
           "a blocked file could not be read, nor its other name (a hard link found beforehand "
           "and blocked with it), nor a hard link made to it in the write grant; other names "
           "are looked for in a blocked file's directory and the writable ones, and a run is "
           "refused when a link count says that some were not found");
  prove(r, cap::fs_write_confine, true,
        canary + ": a write inside the grant worked, a write outside it was refused");
  prove_by(r, cap::fs_exec_block, canary, found.programs,
           "a blocked program did not run, nor a copy of it made in the write grant (its file "
           "is not readable); it is denied under every name it is looked for by, the files those "
           "resolve to and their other names (hard links), and multi-call programs (busybox, "
           "toybox) are denied with it");
  prove(r, cap::fs_exec_confine, false, unchecked);
  prove_by(r, cap::net_deny, canary, found.network,
           "a connection to a listener on the host's 127.0.0.1 failed with the network denied, "
           "and worked with it allowed");
  prove(r, cap::net_ports, false, unchecked);
  prove(r, cap::limit_memory, false,
        "Seatbelt has no resource limits, and RLIMIT_AS bounds each process, not the sandbox");
  prove(r, cap::limit_processes, false,
        "Seatbelt has no resource limits, and RLIMIT_NPROC counts the user's processes");
  prove(r, cap::limit_files, true, "RLIMIT_NOFILE on every process of the command");
  prove(r, cap::limit_cpu, true, "RLIMIT_CPU on every process of the command");
  prove(r, cap::limit_file_size, true, "RLIMIT_FSIZE on every process of the command");
  prove(r, cap::limit_cpu_share, false, "Seatbelt has no CPU quota");
  std::string evidence;
  bool reaper = sdk::child_supervision_supported(evidence);
  prove(r, cap::limit_timeout, reaper, evidence);
  prove(r, cap::proc_isolate, false,
        "sysctl-read is allowed, and with it the list of every process of the host");
  prove(r, cap::proc_no_subprocess, false, unchecked);
  prove(r, cap::ipc_isolate, false, "POSIX semaphores (ipc-posix-sem) are allowed");
  prove(r, cap::env_grant, false,
        "the command's environment is the grant plus HOME and TMPDIR: TMPDIR names the run's "
        "own directory, since /tmp is not writable, which is one variable more than the grant");
  prove_by(r, cap::home_private, canary, found.home,
           "HOME was an empty directory for its user alone, not the caller's, removed with the "
           "run");
  prove(r, cap::identity_unprivileged, false,
        unchecked + ", and macOS has no no_new_privs to stop a setuid program");
}

}  // namespace cordon::seatbelt
