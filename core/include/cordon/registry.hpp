// The backend registry: finds plugins on the search path, loads their info records, creates
// and probes backends on demand, and turns every failure into a diagnostic.
//
// Search path, first name wins: --plugin-dir (in order), CORDON_PLUGIN_PATH (colon-separated),
// the plugin directory next to the core library (a relocated install), <prefix>/lib/cordon/
// plugins, and — only when the core library runs from the build tree — the build tree's plugin
// directory. A plugin is `cordon-backend-<name>.so`; the `none` backend is built in.
//
// Cost: constructing a registry reads no directory (but for a built-in beyond `none`, whose
// file name it stats in each directory the caller named). Asking for one backend by name stats one
// file per directory and loads only that plugin; listing every backend (discover) loads every
// plugin's info record, but calls no factory. A loaded library is never unloaded.
#pragma once

#include <cordon/config.hpp>
#include <cordon/sdk/backend.hpp>
#include <cordon/sdk/error.hpp>
#include <cordon/sdk/export.hpp>

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cordon {

/// Name of the backend built into the core.
inline constexpr const char* kNoneBackend = "none";

/// A backend compiled into the executable rather than loaded from a plugin file (cordon's
/// static front end builds `landlock` in). It stands where the install's own plugin of that
/// name would: a plugin file of the name in a directory the caller named (--plugin-dir,
/// CORDON_PLUGIN_PATH) still wins over it, and so does the file when the name has a digest pin
/// (a built-in has no file to check it against).
struct BuiltinBackend {
  std::string name;
  std::string version;
  std::function<std::unique_ptr<Backend>(const BackendContext&)> create;
  Locality locality = Locality::local;
};

/// How a registry searches and what it trusts.
struct RegistryOptions {
  std::vector<std::filesystem::path> plugin_dirs;  ///< --plugin-dir, searched first, in order
  bool use_environment = true;                     ///< search CORDON_PLUGIN_PATH
  bool use_default_dirs = true;            ///< search the install and build-tree plugin directories
  bool builtin_none = true;                ///< offer the built-in `none` backend
  std::vector<BuiltinBackend> builtins;    ///< more built-in backends (see BuiltinBackend)
  PluginPins pins;                         ///< allow list and digests; empty: nothing pinned
  std::shared_ptr<spdlog::logger> logger;  ///< handed to every backend; null: silent
  std::filesystem::path state_dir;         ///< parent of each backend's state directory
};

/// One directory of the search path and why it is there.
struct SearchDir {
  std::filesystem::path path;
  std::string origin;       ///< "--plugin-dir", "CORDON_PLUGIN_PATH", "install", "build tree", ...
  bool must_exist = false;  ///< named by the caller: a missing one is a diagnostic
};

/// A warning or an error about a plugin. Never fatal to cordon, never silent.
struct Diagnostic {
  enum class Level { warning, error };
  Level level = Level::error;
  Error error;
  std::filesystem::path path;  ///< the plugin file or directory concerned
};

/// What the registry knows about one backend.
struct BackendEntry {
  std::string name;
  std::filesystem::path path;  ///< the plugin file; empty for a built-in backend
  bool builtin = false;
  bool loaded = false;    ///< the info record was read and accepted (built-ins: always)
  bool created = false;   ///< the factory returned a backend
  std::string version;    ///< from the info record
  std::string toolchain;  ///< from the info record
  Locality locality = Locality::local;  ///< from the info record (the built-in `none`: local)
  std::optional<Error> error;  ///< why this backend cannot be used: load, pin, factory, probe
};

/// The ABI version and toolchain fingerprint of this core, as a plugin must match them.
struct CoreIdentity {
  std::uint32_t abi_version;
  std::string toolchain;
};
CORDON_API CoreIdentity core_identity();

/// Where backends keep per-host state such as a cached probe (the parent of each backend's
/// directory): /run/cordon/backends for root, $XDG_RUNTIME_DIR/cordon/backends, else
/// $XDG_CACHE_HOME/cordon/backends or ~/.cache/cordon/backends. Reads the environment only.
CORDON_API std::filesystem::path default_backend_state_dir();

/// True for a usable backend name: 1 to 31 of [a-z0-9_-], starting with a letter or digit.
CORDON_API bool valid_backend_name(const std::string& name);

/// Finds, loads, creates and probes backends. Not thread-safe; one per process or per request.
class CORDON_API Registry {
 public:
  explicit Registry(RegistryOptions options = {});
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  /// The directories searched, in order (duplicates removed). Those beside the core library
  /// and the install's are located at first need: a run of a built-in backend never needs
  /// them, and finding the core library costs a dozen system calls.
  const std::vector<SearchDir>& search_path() const;

  /// The parent of each backend's state directory (RegistryOptions::state_dir).
  const std::filesystem::path& state_dir() const noexcept { return options_.state_dir; }

  /// Every backend name (built-in and plugin files on the path), sorted; loads no plugin.
  std::vector<std::string> names();

  /// Loads the info record of every plugin on the path (no factory is called).
  void discover();

  /// The entry of `name`, loading its info record on first use (and only its); nullptr when no
  /// backend has that name.
  const BackendEntry* find(const std::string& name);

  /// Every entry located so far, sorted by name (call discover() first for all of them).
  std::vector<const BackendEntry*> entries() const;

  /// The backend `name`, created on first use; nullptr when it does not exist or cannot be
  /// used (find(name)->error says why).
  Backend* backend(const std::string& name);

  /// The probe of `name`, probing on first use; nullptr when the backend cannot be created or
  /// its probe failed (find(name)->error says why, CRD3006 for a probe that threw).
  const ProbeResult* probe(const std::string& name);

  /// The probe of `name` for a run with `settings` (Backend::probe_for); nullopt as for
  /// probe(). Empty settings give probe()'s answer.
  std::optional<ProbeResult> probe_for(const std::string& name,
                                       const boost::json::object& settings);

  /// Everything that went wrong or deserves a warning so far, in the order it happened.
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

 private:
  struct Slot;
  Slot* locate(const std::string& name);
  void scan_all();
  void check_named_dirs();
  void load(Slot& slot);
  void fail(Slot& slot, Error error);
  void warn(Error error, const std::filesystem::path& path);
  void add_builtin(const BuiltinBackend& builtin);
  bool named_dirs_hold(const std::string& name) const;

  RegistryOptions options_;
  mutable std::vector<SearchDir> search_path_;  ///< the named directories until search_path()
  mutable bool default_dirs_added_ = false;
  std::map<std::string, std::unique_ptr<Slot>> slots_;
  std::vector<Diagnostic> diagnostics_;
  bool scanned_ = false;
  bool dirs_checked_ = false;
};

}  // namespace cordon
