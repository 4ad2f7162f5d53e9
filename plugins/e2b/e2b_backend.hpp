// The e2b backend: each run in an E2B cloud sandbox (a Firecracker microVM) of its own, created
// (or taken from the pool) for it and killed after it, whatever happens. The control plane over
// HTTPS (api.hpp), the command through envd's Connect stream (envd.hpp) under a fixed script
// (script.hpp), the workspace copied in as one archive (upload.hpp).
#pragma once

#include <cordon/sdk/backend.hpp>
#include <cordon/sdk/probe_cache.hpp>

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "api.hpp"
#include "pool.hpp"
#include "settings.hpp"

namespace cordon::e2b {

/// What the probe found out about one service, template and user.
struct ServiceProof {
  ProbeResult result;
  bool tar = false;  ///< the template has tar: the workspace can be copied in
  std::string uid;   ///< the user's uid in the VM (write paths are handed to it by number)
};

/// Runs the probe's canary in a sandbox of its own: the service, the key, the template, and
/// what the template's user can do. Throws cordon::Error for a service that cannot be used.
ServiceProof probe_service(const Settings& settings, const std::string& key);

/// `proof` as the probe cache keeps it, or nullopt when it must not be kept: only an answer no
/// fresh probe could better is (the user unprivileged, the rlimits held, tar there).
std::optional<boost::json::value> cacheable(const ServiceProof& proof);

/// A cached answer back, or nullopt when it is not one cacheable() would have written. A run
/// relies on none of it to enforce: the script checks the user and the rlimits again, and a
/// wrong uid or a missing tar can only fail the copy-in.
std::optional<ServiceProof> from_cache(const boost::json::value& facts);

class E2bBackend final : public Backend {
 public:
  explicit E2bBackend(BackendContext context) : Backend(std::move(context)) {}
  ~E2bBackend() override;

 protected:
  ProbeResult do_probe() override;
  ProbeResult do_probe_for(const boost::json::object& settings) override;
  std::vector<Error> do_validate_settings(const boost::json::object& settings) override;
  RunResult do_run(const Plan& plan, OutputSink& sink) override;
  GarbageReport do_collect_garbage(const boost::json::object& settings) override;

 private:
  const ServiceProof& proof_for(const Settings& settings);
  /// The probe cache of `settings` (one entry per service, template and user), or nullopt.
  std::optional<sdk::ProbeCache> cache_for(const Settings& settings) const;

  std::mutex mutex_;
  std::map<std::string, ServiceProof> proofs_;
  std::map<std::string, std::pair<std::chrono::steady_clock::time_point, Error>> failed_;
  Pool pool_;
};

}  // namespace cordon::e2b
