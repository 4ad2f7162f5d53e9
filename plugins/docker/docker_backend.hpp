// The docker backend: the Engine API over the daemon's socket, every policy clause mapped to a
// container setting or refused, the container removed whatever happens.
#pragma once

#include <cordon/sdk/backend.hpp>
#include <cordon/sdk/private_dir.hpp>

#include <map>
#include <memory>
#include <mutex>

#include "api.hpp"
#include "exec_block.hpp"
#include "image_user.hpp"
#include "mounted_programs.hpp"
#include "pool.hpp"
#include "probe.hpp"
#include "seccomp_profile.hpp"

namespace cordon::docker {

/// The backend. One object serves any number of runs, from any threads.
class DockerBackend final : public Backend {
 public:
  explicit DockerBackend(BackendContext context);

 protected:
  ProbeResult do_probe() override;
  /// The daemon a run's settings name proves the run, when it is not the default one: each
  /// daemon's kernel and build decide its limits. Its probe is made once and kept while it is
  /// available.
  ProbeResult do_probe_for(const boost::json::object& settings) override;
  RunResult do_run(const Plan& plan, OutputSink& sink) override;
  std::vector<Error> do_validate_settings(const boost::json::object& settings) override;
  GarbageReport do_collect_garbage(const boost::json::object& settings) override;

 private:
  /// The daemon at `ep`, pinged and versioned once per backend object.
  std::shared_ptr<const Daemon> daemon_for(const Endpoint& ep);
  void execute(const Plan& plan, OutputSink& sink, RunResult& result);
  /// The backend's state directory (the context's, else default_backend_state_dir()/docker),
  /// verified (PrivateDir) for each run. Throws CRD1006 when it is not cordon's own.
  PrivateDir state_dir() const;
  /// The warm pool for `daemon`, made on first use with the waiter at `waiter_path`.
  WarmPool& pool_for(const std::shared_ptr<const Daemon>& daemon, const std::string& waiter_path);
  /// What a run's image scan needs: the image, the waiter's copy and cordon's profile.
  struct ImageRun {
    std::string id;
    std::string waiter_path;
    std::shared_ptr<const SeccompProfile> seccomp;
  };
  /// The files of process.blocked_commands, in the image (with the multi-call programs that
  /// provide one) and on the host `mounts` (in `image_files` and `mounted.masks`); throws
  /// CRD1003 when one cannot be masked.
  MountedPrograms blocked_programs(const Daemon& daemon, const PrivateDir& state, const Plan& plan,
                                   const ImageRun& image, const std::vector<HostMount>& mounts,
                                   std::vector<std::string>& image_files);

  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const Daemon>> daemons_;
  std::map<std::string, bool> collected_;      ///< endpoints swept for stale containers
  std::string probed_key_;                     ///< the endpoint do_probe() asked
  std::map<std::string, ProbeResult> probes_;  ///< other endpoints' probes that were available
  ExecBlockCache exec_cache_;
  ImageUsers image_users_;
  std::map<std::string, std::unique_ptr<WarmPool>> pools_;  ///< last: destroyed first
};

}  // namespace cordon::docker
