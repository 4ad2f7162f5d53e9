// How a landlock run ended, turned into its RunResult: the status or the error, the notes of
// the limits that ended it, and what it used.
#pragma once

#include <cordon/sdk/backend.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

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

/// The blocked commands that a program the sandbox could not execute (EACCES) is or provides,
/// when the policy masked it; empty otherwise (masked_for(), bound to the run's host view).
using MaskedProgram = std::function<std::vector<std::string>(const std::string& path)>;

/// Fills `result` from the supervised outcome and the group's counts. An execve refused on a
/// masked program is CRD4005 naming the blocked commands, as a blocked command is before the
/// run; any other exec failure CRD5004/CRD5005.
void fill_outcome(const Outcome& out, const Plan& plan, const Identity& identity, const Totals& cg,
                  const MaskedProgram& masked, RunResult& result);

}  // namespace cordon::landlock
