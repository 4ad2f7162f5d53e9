// The ssh backend: commands on a remote host over libssh, under what that host can prove.
#pragma once

#include <cordon/sdk/backend.hpp>

#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <vector>

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
  /// The remote workspace over SFTP (sftp_files.hpp): `root`, else the `workspace` setting.
  std::unique_ptr<WorkspaceFiles> do_open_workspace(const boost::json::object& settings,
                                                    const std::filesystem::path& root,
                                                    const WorkspaceRules& rules) override;

 private:
  std::vector<Target> targets(const boost::json::object& settings) const;
  /// The host's proof, probed once per target for the life of this object.
  HostProof proof_for(const Target& target);
  /// One run on `target`, whose proof is `proof`.
  RunResult run_on(const Plan& plan, const Target& target, const HostProof& proof,
                   OutputSink& sink);
  /// A fleet's claims: each capability some usable host proves, with those hosts' evidence;
  /// each host's proof (or why it was skipped) as a fact (fleet.cpp).
  ProbeResult fleet_probe(const std::vector<Target>& targets);
  /// A run on the least busy host of the fleet that proves every requirement; a host whose
  /// connection fails before the command starts is passed over for the next (fleet.cpp).
  RunResult fleet_run(const Plan& plan, const std::vector<Target>& targets, OutputSink& sink);
  /// A run on the remote-cordon path over the connection's `cordon serve` (remote_server.hpp).
  RunResult run_served(const Plan& plan, const Target& target, const std::string& cordon,
                       OutputSink& sink);
  /// A run on the remote-cordon path, one remote process each (remote_cordon.hpp).
  RunResult run_under_cordon(const Plan& plan, const Target& target, const std::string& cordon,
                             OutputSink& sink);

  Pool pool_;
  std::mutex mutex_;
  std::map<std::string, HostProof> proofs_;
  std::map<std::string, int> busy_;
  /// Hosts whose connection or probe failed: until when, and the error (fleets skip them).
  std::map<std::string, std::pair<std::chrono::steady_clock::time_point, Error>>
      failed_;  ///< runs in progress per target key (fleets: least busy)
};

}  // namespace cordon::ssh
