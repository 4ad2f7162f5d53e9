// What the run needs from the host before the container is made: the identity, which write
// and blocked paths exist, and the empty mode-000 masks. Makes syscalls; no daemon calls.
#pragma once

#include <cordon/backend.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "container_spec.hpp"
#include "settings.hpp"

namespace cordon::docker {

/// The container's user: the setting, else the workspace's owner when that is not root, else
/// 65534:65534 (nobody). Never root.
std::string container_user(const Plan& plan, const Settings& settings);

/// filesystem.write paths that exist on the host (a bind source must exist), and notes for the
/// others.
std::vector<std::string> existing_write_paths(const Plan& plan, std::vector<std::string>& notes);

/// The policy's blocked paths as they are on the host.
std::vector<BlockedPath> blocked_paths(const Plan& plan);

/// Makes (once) an empty mode-000 file and directory under `dir` for masking; returns their
/// paths. Throws CRD1003 when they cannot be made.
std::pair<std::string, std::string> ensure_masks(const std::filesystem::path& dir);

/// A fresh random run id: 16 hex digits.
std::string new_run_id();

}  // namespace cordon::docker
