// Loading one plugin file (internal): pins, dlopen, the info record, the factory.
#pragma once

#include <cordon/config.hpp>
#include <cordon/sdk/export.hpp>
#include <cordon/sdk/plugin.hpp>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

namespace cordon::detail {

/// A plugin whose info record was accepted; its library stays loaded for the process.
struct LoadedPlugin {
  std::string version;
  std::string toolchain;
  Locality locality = Locality::local;
  PluginFactory* factory = nullptr;
};

/// The outcome of load_plugin: a plugin, or why it was refused.
struct LoadOutcome {
  std::optional<LoadedPlugin> plugin;
  std::optional<Error> error;
};

/// Checks an info record against this core and the expected name, and that it declares a
/// locality this core knows; the refusal names both sides. Pure.
CORDON_API std::optional<Error> check_info(const PluginInfo& info, const std::string& name,
                                           const std::filesystem::path& path);

/// Loads `path` as the plugin of backend `name`: refuses it unpinned before any code is loaded
/// (allow list CRD3008, digest CRD3009), then loads it (CRD3001), finds both symbols (CRD3002)
/// and checks the info record (CRD3003, CRD3004, CRD3012; an unknown locality CRD3003). Never calls
/// the factory.
CORDON_API LoadOutcome load_plugin(const std::filesystem::path& path, const std::string& name,
                                   const PluginPins& pins);

/// Calls a plugin's factory, catching everything (CRD3005 on a throw or a null result).
CORDON_API std::unique_ptr<Backend> create_backend(PluginFactory* factory,
                                                   const BackendContext& context,
                                                   std::optional<Error>& error);

}  // namespace cordon::detail
