// Deriving requirements: a pure function from a policy to the capabilities it needs proven.
#pragma once

#include <cordon/sdk/export.hpp>
#include <cordon/sdk/policy.hpp>

#include <string>
#include <vector>

namespace cordon {

/// One capability a backend must prove, and the policy clause that asks for it.
struct Requirement {
  std::string id;      ///< a capability id, e.g. "net.deny"
  std::string clause;  ///< the clause that asks for it, e.g. "network.allow = false"
  bool operator==(const Requirement&) const = default;
};

/// Sorted by id, each id once.
using Requirements = std::vector<Requirement>;

/// The capabilities `policy` needs. Pure: no I/O, no syscalls.
CORDON_API Requirements derive_requirements(const Policy& policy);

/// A clause of a policy that asks no capability, because no backend could prove it: it is
/// advisory (process.blocked_imports).
struct Advisory {
  std::string clause;  ///< e.g. "process.blocked_imports (2 modules)"
  std::string why;     ///< why nothing enforces it, and what does report it
  bool operator==(const Advisory&) const = default;
};

/// The advisory clauses of `policy`, none when it has none. Pure.
CORDON_API std::vector<Advisory> advisory_clauses(const Policy& policy);

/// The note a run's result carries for an advisory clause. Pure.
CORDON_API std::string advisory_note(const Advisory& advisory);

/// True when `reqs` contains `id`.
CORDON_API bool requires_capability(const Requirements& reqs, std::string_view id);

}  // namespace cordon
