// cordon's own state as every run must keep it from the command (internal).
//
// Plan::protected_paths lists the directories a sandbox must neither read nor write, whatever
// the policy grants: the `cordon` directories of the job state and of the backend state (the
// probe cache), the configuration directory, every plugin directory, and what the caller adds
// (a job's own state directory, an explicit --config file). A state root that does not exist
// yet is made now, privately (PrivateDir), so that no sandbox can make it first for a later
// cordon to trust; a missing configuration directory likewise. cordon makes them only within
// an existing home or base directory (HOME, the XDG bases, /var/lib, /run), never the base
// itself. The state and configuration roots a cordon of this user would take under another HOME
// or XDG variable (state_roots) are made and protected too: a later cordon, from a cron job or a
// login shell, may run with another environment than this run's.
#pragma once

#include <cordon/registry.hpp>
#include <cordon/sdk/export.hpp>
#include <cordon/sdk/state_roots.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace cordon::detail {

/// The `cordon` directory a state directory lies in (".../cordon/jobs" -> ".../cordon"), else
/// the directory itself; lexically normal. Pure.
CORDON_API std::filesystem::path cordon_root_of(const std::filesystem::path& dir);

/// The protected paths of a run with `registry` (its state directory and search path) under
/// `policy` (the files it was loaded from), and the caller's `extra` ones: absolute, lexically
/// normal, each once. Makes the missing state roots and configuration directory; one that cannot
/// be made (not cordon's own: CRD1006) is protected all the same, with a line in `notes`.
CORDON_API std::vector<std::filesystem::path> own_state_paths(
    const Registry& registry, const Policy& policy, const std::vector<std::filesystem::path>& extra,
    std::vector<std::string>& notes);

}  // namespace cordon::detail
