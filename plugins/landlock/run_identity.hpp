// Who a run's command is on the host, and what `~` means for it. A root cordon runs the command
// as the workspace's owner (or nobody, or backends.landlock.uid); the policy's `~` paths were
// expanded for cordon's own user, so for another user the grants move to that user's home and
// the blocked `~` paths cover both homes. `cordon explain` shows the same decisions (preview).
#pragma once

#include <cordon/sdk/backend.hpp>

#include <optional>
#include <string>
#include <vector>

#include "idmap.hpp"
#include "settings.hpp"

namespace cordon::landlock {

/// The identity the command of `plan` runs as; what of the settings was ignored, and a
/// workspace that identity cannot write, go to `notes`. Reads the workspace's owner and mode.
Identity identity_for(const Plan& plan, const Settings& settings, std::vector<std::string>& notes);

/// `plan` with `~` re-expanded for the command's user, when that is not cordon's user and has a
/// home directory here (nobody's /nonexistent holds nothing to grant or block); the decision is
/// noted in `notes`. nullopt: the plan stands as it is.
std::optional<Plan> for_command_user(const Plan& plan, const Identity& identity,
                                     std::vector<std::string>& notes);

/// What a run of `plan` would decide before it starts: the command's identity and why, and
/// where each `~` path of the policy lands (facts); what it would note as wrong (warnings).
/// Reads the host (user database, the workspace).
RunPreview preview_run(const Plan& plan);

}  // namespace cordon::landlock
