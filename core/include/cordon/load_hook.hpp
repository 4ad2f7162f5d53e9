// A hook that runs just before cordon loads a shared object (a backend plugin, the YAML policy
// module, or an NSS module for the user database: cordon/user_db.hpp), and where a piece of
// code was loaded from.
//
// cordon's `cordon` executable is a static front end that cannot load them: it runs
// `--backend landlock` with the backend built in, and hands any other command line to the full
// executable. It sets a hook that does the hand-off, so the decision is made at the one place a
// plugin is needed, before anything irreversible (see front/README.md).
#pragma once

#include <cordon/sdk/export.hpp>

#include <filesystem>

namespace cordon {

/// Called with the file about to be loaded. It may not return (an exec); when it returns, the
/// load goes ahead.
using LoadHook = void (*)(const std::filesystem::path& file);

/// Sets the process's hook (null: none, the default). Not thread-safe: set it before cordon
/// loads anything.
CORDON_API void set_load_hook(LoadHook hook);

/// The file holding the code or data at `address`: a shared object's path, or the executable's
/// own (through /proc/self/exe, since the loader knows it only as argv[0]) when it is linked
/// into the program. Empty when unknown.
CORDON_API std::filesystem::path code_file(const void* address);

namespace detail {
/// Runs the hook, if any, for `file`.
CORDON_API void before_load(const std::filesystem::path& file);
}  // namespace detail

}  // namespace cordon
