// The probe: asks a daemon (the backend's probe: DOCKER_HOST or the default socket; a run: the
// daemon its settings name) whether it answers, which API it speaks, which limits its kernel
// setup supports, which runtimes it has and whether a user namespace remap or rootless mode is
// in use; then says what each capability rests on.
#pragma once

#include <cordon/sdk/backend.hpp>

#include <optional>
#include <string>
#include <vector>

namespace cordon::docker {

/// What the probe learned from the daemon.
struct ProbeFacts {
  std::string where;           ///< the endpoint, for messages
  std::string failure;         ///< why the daemon could not be used; empty when it could
  std::optional<Error> error;  ///< the same, as cordon's error (its code and hint), when it is one
  std::string api;             ///< negotiated API version
  std::string server;          ///< engine version
  std::string arch;            ///< the daemon's architecture (/version Arch, "amd64")
  bool memory = false;         ///< MemoryLimit and SwapLimit
  bool pids = false;           ///< PidsLimit
  bool cpu_quota = false;      ///< CpuCfsQuota
  bool userns = false;         ///< SecurityOptions has name=userns
  bool rootless = false;       ///< SecurityOptions has name=rootless
  bool seccomp = false;        ///< SecurityOptions has name=seccomp
  bool init = false;           ///< the daemon names an init binary
  std::string cgroup_version;
  std::vector<std::string> runtimes;
};

struct Endpoint;

/// Asks the daemon at `ep`. Never throws: failures land in `failure`.
ProbeFacts gather_probe_facts(const Endpoint& ep);

/// One proof per capability, with evidence. Pure.
ProbeResult probe_result(const ProbeFacts& facts);

}  // namespace cordon::docker
