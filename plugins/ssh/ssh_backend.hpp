// The ssh backend: commands on a remote host over libssh, under what that host can prove.
#pragma once

#include <cordon/sdk/backend.hpp>

#include <map>
#include <mutex>
#include <string>

#include "connection.hpp"
#include "probe.hpp"
#include "settings.hpp"

namespace cordon::ssh {

class SshBackend final : public Backend {
 public:
  explicit SshBackend(BackendContext context) : Backend(std::move(context)) {}

 protected:
  ProbeResult do_probe() override;
  ProbeResult do_probe_for(const boost::json::object& settings) override;
  RunResult do_run(const Plan& plan, OutputSink& sink) override;
  std::vector<Error> do_validate_settings(const boost::json::object& settings) override;

 private:
  Target target(const boost::json::object& settings) const;
  /// The host's proof, probed once per target for the life of this object.
  HostProof proof_for(const Target& target);
  /// A run on the remote-cordon path (remote_cordon.hpp).
  RunResult run_under_cordon(const Plan& plan, const Target& target, const std::string& cordon,
                             OutputSink& sink);

  Pool pool_;
  std::mutex mutex_;
  std::map<std::string, HostProof> proofs_;
};

}  // namespace cordon::ssh
