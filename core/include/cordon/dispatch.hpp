// Dispatch: which backend runs a command, or why none may. Pure: the caller probes, this
// decides. A refusal names each unproven requirement with the backend's own evidence.
#pragma once

#include <cordon/sdk/backend.hpp>
#include <cordon/sdk/error.hpp>
#include <cordon/sdk/export.hpp>
#include <cordon/sdk/requirements.hpp>

#include <optional>
#include <string>
#include <vector>

namespace cordon {

/// What the caller asks for. Dispatch names no backend of its own: the default order comes
/// from the configuration (`[dispatch] order`, shipped in cordon's own configuration file).
struct DispatchRequest {
  Requirements requirements;
  std::optional<std::string> named;  ///< --backend NAME (or the request's backend)
  std::vector<std::string> prefer;   ///< the policy's backend.prefer
  std::string policy_name;           ///< for messages; may be empty
  /// The configuration's [dispatch] order: tried after `prefer`, its remote backends passed
  /// over (a remote backend is chosen only when named or preferred).
  std::vector<std::string> order = {};
};

/// True when `name` is the named backend or one the policy prefers: a remote backend is a
/// candidate only then. Pure.
CORDON_API bool asked_for(const DispatchRequest& request, const std::string& name);

/// The candidates to consider, in order, and the names left out with the reason.
struct CandidateOrder {
  std::vector<std::string> order;
  std::vector<std::pair<std::string, std::string>> skipped;  ///< name, why it is not a candidate
};

/// Named: that backend alone. Otherwise `prefer` (minus `none`), then the configured `order`
/// (minus `none`) not already listed; each name once. Locality is the candidates' business
/// (decide() passes over a remote one not asked for).
CORDON_API CandidateOrder dispatch_order(const DispatchRequest& request);

/// What is known about one candidate when the decision is made.
struct Candidate {
  std::string name;
  bool installed = false;               ///< a backend of this name exists
  std::optional<Error> error;           ///< it exists but could not be loaded, created or probed
  std::optional<ProbeResult> probe;     ///< its probe, when it got that far
  Locality locality = Locality::local;  ///< from its info record (remote: probed only if asked)
};

/// An unproven requirement with the evidence the backend gave.
struct Shortfall {
  Requirement requirement;
  std::string evidence;
};

/// One candidate measured against the requirements.
struct Verdict {
  std::string name;
  bool satisfies = false;
  std::string reason;               ///< why not, one line; empty when it satisfies
  std::vector<Shortfall> unproven;  ///< each requirement its probe did not prove
};

/// Measures `candidate` against `requirements`.
CORDON_API Verdict judge(const Requirements& requirements, const Candidate& candidate);

/// Measures `candidate` as dispatch for `request` does: judge(), but a remote candidate that was
/// not asked for (asked_for) is passed over unjudged, saying so.
CORDON_API Verdict assess(const DispatchRequest& request, const Candidate& candidate);

/// The decision: a backend, or a refusal.
struct Decision {
  std::optional<std::string> chosen;
  std::vector<Verdict> passed_over;  ///< every candidate (and skipped name) not chosen, in order
  std::optional<Error> refusal;      ///< CRD1001 / CRD1004 / CRD3010 / the backend's CRD3xxx
};

/// Decides. `candidates` holds one entry for each name of dispatch_order(request).order, up to
/// the first that satisfies (more are allowed and judged); a name with no entry counts as not
/// installed. A remote candidate that was not asked for (asked_for) is passed over unjudged.
/// `known` lists every backend name, for the CRD3010 message.
CORDON_API Decision decide(const DispatchRequest& request, const std::vector<Candidate>& candidates,
                           const std::vector<std::string>& known);

/// The refusal text of one verdict, indented by `indent` spaces, one line per shortfall.
CORDON_API std::string describe(const Verdict& verdict, int indent);

}  // namespace cordon
