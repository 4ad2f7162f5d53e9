// The enforcement report of a run: one line per requirement, naming what the container was
// given for it. Pure.
#pragma once

#include <cordon/sdk/backend.hpp>
#include <cordon/sdk/result.hpp>

#include <vector>

#include "container_spec.hpp"

namespace cordon::docker {

/// One Enforcement per requirement of `plan`, in the plan's order, then "sys.deny": the seccomp
/// profile, when cordon's applies.
std::vector<Enforcement> enforcement_report(const Plan& plan, const ContainerSpec& spec,
                                            const std::string& user, const std::string& api);

}  // namespace cordon::docker
