// How a landlock run ended, turned into its RunResult: the status or the error, the notes of
// the limits that ended it, and what it used.
#pragma once

#include <cordon/sdk/backend.hpp>

#include <cstdint>
#include <optional>

#include <cordon/sdk/cgroup.hpp>
#include "idmap.hpp"
#include "spawn.hpp"
#include "supervise.hpp"

namespace cordon::landlock {

/// What the sandbox's group counted, read before it is removed.
struct Totals {
  std::uint64_t oom_kills = 0;
  std::optional<std::uint64_t> peak_memory;
};

/// The group's counts; nothing without a group.
Totals totals_of(const sdk::SandboxCgroup* cg);

/// CRD1003 for a set-up step of the sandbox that failed, naming the identity it ran as.
Error setup_error(const ChildReport& r, const Identity& identity);

/// CRD4005 for a program the sandbox could not execute because the policy masked it: it is,
/// or provides as applets, the blocked commands `names` (not empty).
Error masked_program_error(const std::string& path, const std::vector<std::string>& names);

/// Fills `result` from the supervised outcome and the group's counts.
void fill_outcome(const Outcome& out, const Plan& plan, const Identity& identity, const Totals& cg,
                  RunResult& result);

}  // namespace cordon::landlock
