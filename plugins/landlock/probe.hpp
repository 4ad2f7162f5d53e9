// The probe: proves by doing, in one throwaway child, that this host can give a sandbox its
// namespaces, a fresh /proc, a Landlock domain, a seccomp filter and a per-namespace task
// count; finds the limits mechanism; then says what each capability rests on.
#pragma once

#include <cordon/sdk/backend.hpp>

#include <string>

#include <cordon/sdk/cgroup.hpp>
#include "seccomp.hpp"

namespace cordon::landlock {

/// What the probe established.
struct ProbeFacts {
  bool root = false;              ///< cordon runs as root
  int abi = 0;                    ///< Landlock ABI, or -errno
  bool namespaces = false;        ///< user, mount, pid, IPC, UTS and cgroup namespaces made
  bool fresh_proc = false;        ///< a fresh /proc mounted, where the child is pid 1
  bool identity = false;          ///< the child became the unprivileged sandbox uid
  bool landlock = false;          ///< a Landlock domain denied a read it did not grant
  bool seccomp = false;           ///< the filter denied unshare to a process able to do it
  bool nproc_per_userns = false;  ///< RLIMIT_NPROC set inside counted the namespace only
  bool netns = false;
  std::string netns_evidence;
  std::string failure;  ///< why the child could not do its part
  sdk::CgroupSupport cgroups;
  long micros = 0;  ///< how long the probe took
};

/// Runs the probe. `filter` is the run's default filter (compiled once, reused by runs).
ProbeFacts gather_probe_facts(const SeccompProgram& filter);

/// The answer for the core: one proof per capability, with evidence. Pure.
ProbeResult probe_result(const ProbeFacts& facts);

}  // namespace cordon::landlock
