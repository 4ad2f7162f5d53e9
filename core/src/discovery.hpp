// Plugin discovery (internal): the search path and the plugin files in each directory.
#pragma once

#include <cordon/registry.hpp>
#include <cordon/sdk/export.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cordon::detail {

/// Everything the search path depends on, gathered first so that building it is pure.
struct SearchInputs {
  std::vector<std::filesystem::path> plugin_dirs;    ///< --plugin-dir
  std::optional<std::string> env_path;               ///< CORDON_PLUGIN_PATH, colon-separated
  std::optional<std::filesystem::path> library_dir;  ///< <dir of libcordon-core>/cordon/plugins
  std::optional<std::filesystem::path> install_dir;  ///< <prefix>/lib/cordon/plugins
  std::optional<std::filesystem::path> build_dir;    ///< set only when running from the build tree
};

/// The search path in order, each directory once (lexically normalised). Pure.
CORDON_API std::vector<SearchDir> build_search_path(const SearchInputs& in);

/// Reads the environment and (with `default_dirs`, and unless options.use_default_dirs is
/// off) the core library's location for `options`.
CORDON_API SearchInputs gather_search_inputs(const RegistryOptions& options,
                                             bool default_dirs = true);

/// "cordon-backend-<name>.so" -> "<name>"; nullopt for any other file name. Pure.
CORDON_API std::optional<std::string> backend_name_of(const std::string& file_name);

/// "<name>" -> "cordon-backend-<name>.so". Pure.
CORDON_API std::string plugin_file_name(const std::string& name);

/// A plugin file found in a directory.
struct FoundFile {
  std::string name;
  std::filesystem::path path;
};

/// The plugin files of one directory, sorted by name, and what went wrong reading it.
struct ScanResult {
  std::vector<FoundFile> files;
  std::vector<Diagnostic> diagnostics;
};

/// Lists `dir` (no plugin is loaded). A missing directory is a diagnostic only when the caller
/// named it; an unreadable one always is (CRD3013); a bad file name is CRD3012.
CORDON_API ScanResult scan_dir(const SearchDir& dir);

/// The plugin file `name` in `dir`, when it exists as a regular file (symlinks followed).
CORDON_API std::optional<std::filesystem::path> plugin_in_dir(const SearchDir& dir,
                                                              const std::string& name);

}  // namespace cordon::detail
