// The `none` backend's class (internal); see cordon/backend_none.hpp for what it is.
#pragma once

#include <cordon/backend_none.hpp>

#include <filesystem>
#include <optional>
#include <string>

#include "spawn.hpp"

namespace cordon::detail {

/// A plain supervised child process. Proves env.grant, home.private, limit.files, limit.cpu,
/// limit.file_size, limit.timeout (when a subreaper works here) and identity.unprivileged
/// (when cordon itself holds no privileges) — nothing else.
class NoneBackend final : public Backend {
 public:
  explicit NoneBackend(BackendContext context) : Backend(std::move(context)) {}

 protected:
  ProbeResult do_probe() noexcept override;
  RunResult do_run(const Plan& plan, OutputSink& sink) noexcept override;
};

/// The resource limits `policy` asks for that rlimits enforce per process.
CORDON_API std::vector<std::pair<int, rlim_t>> none_rlimits(const Limits& limits);

/// Maps a spawn outcome to a run result: exit code or signal, timeout, and the CRD5004 /
/// CRD5005 / CRD1003 / CRD5003 errors. Pure.
CORDON_API RunResult none_result(const SpawnOutcome& outcome, const Plan& plan);

}  // namespace cordon::detail
