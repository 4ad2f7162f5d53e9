// Dispatch: which backend runs a command, or why none may. Pure: the caller probes, this
// decides. A refusal names each unproven requirement with the backend's own evidence.
#pragma once

#include <cordon/backend.hpp>
#include <cordon/error.hpp>
#include <cordon/export.hpp>
#include <cordon/requirements.hpp>

#include <optional>
#include <string>
#include <vector>

namespace cordon {

/// The local backends tried, in this order, after the policy's `backend.prefer` list: those
/// that exist for the system cordon was built for (on Linux: landlock, docker).
CORDON_API const std::vector<std::string>& default_local_backends();

/// True for a backend that runs the command on another machine (`ssh`, `e2b`): it is a
/// candidate only when named or preferred.
CORDON_API bool is_remote_backend(const std::string& name);

/// What the caller asks for.
struct DispatchRequest {
  Requirements requirements;
  std::optional<std::string> named;  ///< --backend NAME (or the request's backend)
  std::vector<std::string> prefer;   ///< the policy's backend.prefer
  std::string policy_name;           ///< for messages; may be empty
};

/// The candidates to consider, in order, and the names left out with the reason.
struct CandidateOrder {
  std::vector<std::string> order;
  std::vector<std::pair<std::string, std::string>> skipped;  ///< name, why it is not a candidate
};

/// Named: that backend alone. Otherwise `prefer` (minus `none`), then the default local
/// backends not already listed; each name once.
CORDON_API CandidateOrder dispatch_order(const DispatchRequest& request);

/// What is known about one candidate when the decision is made.
struct Candidate {
  std::string name;
  bool installed = false;            ///< a backend of this name exists
  std::optional<Error> error;        ///< it exists but could not be loaded, created or probed
  std::optional<ProbeResult> probe;  ///< its probe, when it got that far
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

/// The decision: a backend, or a refusal.
struct Decision {
  std::optional<std::string> chosen;
  std::vector<Verdict> passed_over;  ///< every candidate (and skipped name) not chosen, in order
  std::optional<Error> refusal;      ///< CRD1001 / CRD1004 / CRD3010 / the backend's CRD3xxx
};

/// Decides. `candidates` holds one entry for each name of dispatch_order(request).order, up to
/// the first that satisfies (more are allowed and judged); a name with no entry counts as not
/// installed. `known` lists every backend name, for the CRD3010 message.
CORDON_API Decision decide(const DispatchRequest& request, const std::vector<Candidate>& candidates,
                           const std::vector<std::string>& known);

/// The refusal text of one verdict, indented by `indent` spaces, one line per shortfall.
CORDON_API std::string describe(const Verdict& verdict, int indent);

}  // namespace cordon
