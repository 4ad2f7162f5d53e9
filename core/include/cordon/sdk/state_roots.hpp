// Where a cordon of a given user keeps its state and configuration by default, under any
// environment it may run with. A run keeps every such directory out of its command's reach:
// what a command writes there would steer a later cordon (one started from a cron job or a
// login shell, with another HOME or XDG variable, or as the user a root cordon ran it as).
#pragma once

#include <sys/types.h>
#include <cordon/sdk/export.hpp>

#include <filesystem>
#include <vector>

namespace cordon {

/// The directory the environment variable `name` names, as every default location of cordon
/// reads it: empty when it is unset, not absolute, has a ".." component (the kernel resolves
/// "link/.." through the link, a lexical reading does not), or lies under /proc, by its name or
/// through a symlink (a magic link such as /proc/self/cwd names another directory in each
/// process).
CORDON_API std::filesystem::path env_dir(const char* name);

/// What state_roots() is computed from.
struct StateEnv {
  uid_t euid = 0;              ///< the user whose cordon it is
  std::filesystem::path home;  ///< HOME (env_dir), empty when unusable
  std::filesystem::path xdg_state, xdg_cache, xdg_config, xdg_runtime;  ///< the XDG bases
  std::filesystem::path user_home;  ///< the home the user database gives
};

/// This process's: its effective uid, env_dir() of HOME and of the XDG bases, and the user
/// database's home of its real uid.
CORDON_API StateEnv state_env();

/// Another user's, as far as it can be known without their environment: no XDG bases, HOME and
/// the user database's home both `home`.
CORDON_API StateEnv state_env_of(uid_t uid, const std::filesystem::path& home);

/// A `cordon` directory a cordon may keep state or configuration in, and the existing home or
/// base directory it would be made in (never made itself).
struct StateRoot {
  std::filesystem::path dir;
  std::filesystem::path base;
};

/// Every `cordon` directory the default locations can name for `env`'s user, whichever of its
/// homes and XDG variables a cordon runs with: the job state's (XDG_STATE_HOME, ~/.local/state,
/// /var/lib for root), the backend state's (/run for root; the runtime directory, /run/user/UID,
/// XDG_CACHE_HOME, ~/.cache) and the configuration's (XDG_CONFIG_HOME, ~/.config). Lexically
/// normal, each once; "/" is never a home. Pure.
CORDON_API std::vector<StateRoot> state_roots(const StateEnv& env);

/// The `cordon` directories of state_roots() for the user `uid` runs a command as, when that is
/// not this process's effective user (a root cordon running the command as the workspace's
/// owner): that user's later cordon trusts what the command writes there, so a backend keeps
/// them from it as it keeps cordon's own (Plan::protected_paths). Empty for this process's own
/// user. Reads the user database.
CORDON_API std::vector<std::filesystem::path> command_user_state(uid_t uid);

/// Those of command_user_state(uid) that `kept` does not list yet: what a backend adds to a
/// run's protected paths when it runs the command as `uid`.
CORDON_API std::vector<std::filesystem::path> command_user_state_beyond(
    uid_t uid, const std::vector<std::filesystem::path>& kept);

/// The `cordon` directories of state_roots() of every other user of /etc/passwd whose home lies
/// in `dir` (absolute): a root cordon that writes in `dir` itself (the workspace file API) must
/// not write what their later cordon trusts. Reads /etc/passwd.
CORDON_API std::vector<std::filesystem::path> users_state_within(const std::filesystem::path& dir);

}  // namespace cordon
