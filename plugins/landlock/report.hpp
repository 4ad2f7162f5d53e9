// The enforcement report of a run: one line per requirement of the plan, naming the
// mechanism that enforced it here ("net.deny: network namespace with only loopback").
#pragma once

#include <cordon/sdk/backend.hpp>
#include <cordon/sdk/result.hpp>

#include <vector>

#include "host_paths.hpp"
#include "idmap.hpp"
#include "layout.hpp"
#include "limits.hpp"
#include "ruleset.hpp"

namespace cordon::landlock {

/// What a run put in place.
struct RunSetup {
  const Plan& plan;
  const HostView& view;
  const Layout& layout;
  const RulesetPlan& ruleset;
  const LimitsPlan& limits;
  const Identity& identity;
  bool network_namespace = false;
};

/// One Enforcement per requirement of `setup.plan`, in the plan's order. Pure.
std::vector<Enforcement> enforcement_report(const RunSetup& setup);

}  // namespace cordon::landlock
