// The `none` backend's class (internal); see cordon/backend_none.hpp for what it is.
#pragma once

#include <cordon/backend_none.hpp>

#include <filesystem>
#include <optional>
#include <string>

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

}  // namespace cordon::detail
