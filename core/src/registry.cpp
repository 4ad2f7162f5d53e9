// The registry: one slot per backend name, filled lazily — located, loaded, created, probed.
#include <cordon/backend_none.hpp>
#include <cordon/registry.hpp>
#include <cordon/sdk/log.hpp>
#include <cordon/sdk/plugin.hpp>
#include <cordon/sdk/state_roots.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include "discovery.hpp"
#include "plugin_loader.hpp"

namespace cordon {

namespace fs = std::filesystem;

struct Registry::Slot {
  BackendEntry entry;
  std::optional<detail::LoadedPlugin> plugin;
  std::unique_ptr<Backend> backend;
  std::function<std::unique_ptr<Backend>(const BackendContext&)> create_builtin;
  bool load_tried = false;
  bool create_tried = false;
};

CoreIdentity core_identity() { return {CORDON_PLUGIN_ABI, CORDON_TOOLCHAIN}; }

fs::path default_backend_state_dir() {
  auto from_env = [](const char* name) { return env_dir(name); };
  if (::geteuid() == 0) return "/run/cordon/backends";
  if (auto runtime = from_env("XDG_RUNTIME_DIR"); !runtime.empty())
    return runtime / "cordon" / "backends";
  if (auto cache = from_env("XDG_CACHE_HOME"); !cache.empty()) return cache / "cordon" / "backends";
  if (auto home = from_env("HOME"); !home.empty()) return home / ".cache" / "cordon" / "backends";
  return {};
}

bool valid_backend_name(const std::string& name) {
  if (name.empty() || name.size() > 31) return false;
  auto ok = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!ok(name.front())) return false;
  return std::all_of(name.begin(), name.end(),
                     [&ok](char c) { return ok(c) || c == '_' || c == '-'; });
}

Registry::Registry(RegistryOptions options) : options_(std::move(options)) {
  search_path_ = detail::build_search_path(detail::gather_search_inputs(options_, false));
  if (options_.builtin_none) {
    auto slot = std::make_unique<Slot>();
    slot->entry.name = kNoneBackend;
    slot->entry.builtin = true;
    slot->entry.loaded = true;
    slot->entry.version = CORDON_VERSION;
    slot->entry.toolchain = CORDON_TOOLCHAIN;
    slot->entry.locality = Locality::local;  // it runs the command here, unconfined
    slots_.emplace(kNoneBackend, std::move(slot));
  }
  for (const auto& builtin : options_.builtins) add_builtin(builtin);
}

const std::vector<SearchDir>& Registry::search_path() const {
  if (!default_dirs_added_) {
    search_path_ = detail::build_search_path(detail::gather_search_inputs(options_));
    default_dirs_added_ = true;
  }
  return search_path_;
}

// A plugin file in a directory the caller named comes before the install's plugins, and so
// before a built-in standing in for one of them.
bool Registry::named_dirs_hold(const std::string& name) const {
  for (const auto& dir : search_path_)
    if (dir.must_exist && detail::plugin_in_dir(dir, name)) return true;
  return false;
}

// A built-in has no file to check a digest pin against: a pinned name is left to its file.
void Registry::add_builtin(const BuiltinBackend& builtin) {
  if (!valid_backend_name(builtin.name) || slots_.count(builtin.name) ||
      options_.pins.sha256.count(builtin.name) || named_dirs_hold(builtin.name))
    return;
  auto slot = std::make_unique<Slot>();
  slot->entry.name = builtin.name;
  slot->entry.builtin = true;
  slot->entry.loaded = true;
  slot->entry.version = builtin.version;
  slot->entry.toolchain = CORDON_TOOLCHAIN;
  slot->entry.locality = builtin.locality;
  slot->create_builtin = builtin.create;
  slots_.emplace(builtin.name, std::move(slot));
}

Registry::~Registry() = default;

void Registry::warn(Error error, const fs::path& path) {
  if (options_.logger) cordon::log::debug(*options_.logger, error.what());
  diagnostics_.push_back({Diagnostic::Level::warning, std::move(error), path});
}

void Registry::fail(Slot& slot, Error error) {
  if (options_.logger) cordon::log::debug(*options_.logger, error.what());
  diagnostics_.push_back({Diagnostic::Level::error, error, slot.entry.path});
  slot.entry.error = std::move(error);
}

namespace {

Error shadowed(const std::string& name, const fs::path& winner, const fs::path& loser) {
  std::string by =
      winner.empty() ? "the built-in backend '" + name + "'" : "'" + winner.string() + "'";
  return Error(
      code::kPluginShadowed,
      "plugin '" + loser.string() + "' is shadowed by " + by + " earlier on the search path",
      "remove one of them, or order the plugin directories as intended");
}

}  // namespace

// Finds one name by stat-ing its file name in each directory: no directory is listed and no
// other plugin is loaded.
Registry::Slot* Registry::locate(const std::string& name) {
  if (auto it = slots_.find(name); it != slots_.end()) return it->second.get();
  if (scanned_ || !valid_backend_name(name)) return nullptr;
  check_named_dirs();
  Slot* found = nullptr;
  for (const auto& dir : search_path()) {
    auto path = detail::plugin_in_dir(dir, name);
    if (!path) continue;
    if (found) {
      warn(shadowed(name, found->entry.path, *path), *path);
      continue;
    }
    auto slot = std::make_unique<Slot>();
    slot->entry.name = name;
    slot->entry.path = *path;
    found = slot.get();
    slots_.emplace(name, std::move(slot));
  }
  return found;
}

// A directory the caller named but that is missing is worth a warning even when nothing is
// listed; scan_all() reports the same for every directory it reads.
void Registry::check_named_dirs() {
  if (dirs_checked_) return;
  dirs_checked_ = true;
  for (const auto& dir : search_path_) {
    std::error_code ec;
    if (!dir.must_exist || fs::is_directory(dir.path, ec)) continue;
    diagnostics_.push_back({Diagnostic::Level::warning,
                            Error(code::kPluginDir,
                                  "cannot read plugin directory '" + dir.path.string() + "' (" +
                                      dir.origin + "): " + (ec ? ec.message() : "not a directory"),
                                  "check the path given to " + dir.origin),
                            dir.path});
  }
}

void Registry::scan_all() {
  if (scanned_) return;
  // A built-in such as landlock in cordon's front end is the install's own plugin of that
  // name, built in: that file is not shadowed by it, it is the same backend.
  auto stands_in = [](const Slot& slot, const SearchDir& dir) {
    return slot.create_builtin && !dir.must_exist;
  };
  scanned_ = true;
  std::set<fs::path> warned;
  for (const auto& d : diagnostics_) warned.insert(d.path);
  for (const auto& dir : search_path()) {
    auto result = detail::scan_dir(dir);
    for (auto& d : result.diagnostics)
      if (warned.insert(d.path).second) diagnostics_.push_back(std::move(d));
    for (const auto& file : result.files) {
      auto [it, inserted] = slots_.try_emplace(file.name, nullptr);
      if (inserted) {
        it->second = std::make_unique<Slot>();
        it->second->entry.name = file.name;
        it->second->entry.path = file.path;
      } else if (it->second->entry.path != file.path && !stands_in(*it->second, dir) &&
                 warned.insert(file.path).second) {
        warn(shadowed(file.name, it->second->entry.path, file.path), file.path);
      }
    }
  }
}

void Registry::load(Slot& slot) {
  if (slot.load_tried) return;
  slot.load_tried = true;
  if (slot.entry.builtin) {
    if (!options_.pins.allows(slot.entry.name))
      fail(slot, Error(code::kPluginNotAllowed,
                       "backend '" + slot.entry.name + "' is not on the allow list",
                       "add '" + slot.entry.name + "' to [plugins] allow to use it"));
    return;
  }
  auto outcome = detail::load_plugin(slot.entry.path, slot.entry.name, options_.pins);
  if (outcome.error) return fail(slot, *outcome.error);
  slot.entry.loaded = true;
  slot.entry.version = outcome.plugin->version;
  slot.entry.toolchain = outcome.plugin->toolchain;
  slot.entry.locality = outcome.plugin->locality;
  slot.plugin = outcome.plugin;
}

std::vector<std::string> Registry::names() {
  scan_all();
  std::vector<std::string> out;
  for (const auto& [name, slot] : slots_) out.push_back(name);
  return out;
}

void Registry::discover() {
  scan_all();
  for (auto& [name, slot] : slots_) load(*slot);
}

const BackendEntry* Registry::find(const std::string& name) {
  Slot* slot = locate(name);
  if (!slot) return nullptr;
  load(*slot);
  return &slot->entry;
}

std::vector<const BackendEntry*> Registry::entries() const {
  std::vector<const BackendEntry*> out;
  for (const auto& [name, slot] : slots_) out.push_back(&slot->entry);
  return out;
}

Backend* Registry::backend(const std::string& name) {
  Slot* slot = locate(name);
  if (!slot) return nullptr;
  load(*slot);
  if (slot->entry.error) return nullptr;
  if (slot->create_tried) return slot->backend.get();
  slot->create_tried = true;
  BackendContext ctx{name, options_.logger,
                     options_.state_dir.empty() ? fs::path() : options_.state_dir / name};
  if (slot->create_builtin) {
    try {
      slot->backend = slot->create_builtin(ctx);
    } catch (const std::exception& e) {
      fail(*slot, Error(code::kPluginFactory,
                        "built-in backend '" + name + "' cannot be created: " + e.what()));
    }
    if (!slot->backend && !slot->entry.error)
      fail(*slot, Error(code::kPluginFactory, "built-in backend '" + name + "' made no backend"));
  } else if (slot->entry.builtin) {
    slot->backend = make_none_backend(std::move(ctx));
  } else {
    std::optional<Error> error;
    slot->backend = detail::create_backend(slot->plugin->factory, ctx, error);
    if (error) fail(*slot, *error);
  }
  slot->entry.created = slot->backend != nullptr;
  return slot->backend.get();
}

std::optional<ProbeResult> Registry::probe_for(const std::string& name,
                                               const boost::json::object& settings) {
  if (settings.empty()) {
    const ProbeResult* p = probe(name);
    return p ? std::optional<ProbeResult>(*p) : std::nullopt;
  }
  Backend* b = backend(name);
  if (!b) return std::nullopt;
  Slot& slot = *slots_.at(name);
  if (slot.entry.error) return std::nullopt;
  ProbeResult result = b->probe_for(settings);
  if (result.fault) {
    fail(slot, *result.fault);
    return std::nullopt;
  }
  return result;
}

const ProbeResult* Registry::probe(const std::string& name) {
  Backend* b = backend(name);
  if (!b) return nullptr;
  Slot& slot = *slots_.at(name);
  if (slot.entry.error) return nullptr;
  const ProbeResult& result = b->probe();
  if (result.fault) {
    fail(slot, *result.fault);
    return nullptr;
  }
  return &result;
}

}  // namespace cordon
