// The landlock backend: namespaces + Landlock + seccomp + cgroups/rlimits, no daemon, no root.
#pragma once

#include <cordon/landlock/front.hpp>
#include <cordon/sdk/backend.hpp>
#include <cordon/sdk/probe_cache.hpp>

#include <atomic>
#include <filesystem>
#include <memory>
#include <optional>

#include "applet_cache.hpp"
#include "keeper_shelf.hpp"
#include "probe.hpp"
#include "seccomp.hpp"

namespace cordon::landlock {

/// The backend. One object serves any number of runs, from any threads.
class LandlockBackend final : public Backend {
 public:
  explicit LandlockBackend(BackendContext context);

 protected:
  ProbeResult do_probe() override;
  RunResult do_run(const Plan& plan, OutputSink& sink) override;
  std::vector<Error> do_validate_settings(const boost::json::object& settings) override;
  RunPreview do_preview(const Plan& plan) override;

 private:
  void execute(const Plan& plan, OutputSink& sink, RunResult& result);
  void check_cached_settings(RunResult& result) noexcept;

  ProbeFacts facts_;
  std::optional<sdk::ProbeCache> cache_;  ///< set by the probe; nullopt: no cache
  /// The kernel settings a cached probe was made under, checked by the first run (which has
  /// its command running by then) rather than before the run starts.
  std::optional<std::string> cached_settings_;
  std::atomic<bool> settings_checked_{false};
  AppletLookup applets_;  ///< set by the probe: busybox's applets, kept
  KeeperShelf keepers_;   ///< started ahead once runs repeat
};

}  // namespace cordon::landlock
