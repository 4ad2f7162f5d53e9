// Running the corpus against one backend: each claimed capability's cases (attack and allowed
// twin), and for each capability the backend does not claim, a run that dispatch must refuse.
#pragma once

#include <cordon/registry.hpp>

#include <string>
#include <vector>

#include "certify_corpus.hpp"
#include "certify_host.hpp"

namespace cordon::cli {

/// What one case showed.
struct CaseOutcome {
  enum class Status { held, failed, skipped } status = Status::failed;
  std::string name;
  std::string evidence;  ///< what was observed (or why it was skipped)
};

/// What certify found for one capability id.
struct CapabilityOutcome {
  enum class Status {
    held,         ///< claimed, and every case that ran held (at least one ran)
    failed,       ///< claimed, and a case failed
    untested,     ///< claimed, but no case could run here
    refused,      ///< not claimed, and dispatch refused a policy requiring it
    not_refused,  ///< not claimed, yet a policy requiring it was run
  } status = Status::failed;
  std::string capability;
  bool claimed = false;
  std::string evidence;  ///< the probe's evidence, or the refusal
  std::vector<CaseOutcome> cases;
  double seconds = 0;
};

/// Where the runs go: the backend, its registry, and cordon's configuration of it.
struct CertifyTarget {
  Registry* registry = nullptr;
  std::string backend;
  std::string base_policy;  ///< a policy file or preset every case extends (empty: neutral)
  boost::json::object config_backends;
  /// What the backend claims: its probe for the configured target (null: nothing claimed).
  const ProbeResult* probe = nullptr;
};

/// Runs every capability of `corpus` against the target; `claims` maps each capability id the
/// backend's probe lists to whether it proved it.
std::vector<CapabilityOutcome> certify_all(const CertifyTarget& target,
                                           const std::vector<CapabilityCases>& corpus,
                                           HostFixtures& host);

const char* status_name(CapabilityOutcome::Status s);
const char* status_name(CaseOutcome::Status s);

}  // namespace cordon::cli
