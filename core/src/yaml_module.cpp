// parse_yaml in libcordon-core: loads the YAML module on first use and calls it.
#include "yaml_module.hpp"

#include <cordon/load_hook.hpp>

#include <dlfcn.h>

#include <filesystem>
#include <mutex>

#include "policy_parse.hpp"

namespace cordon::detail {

namespace {

// The module lives at a fixed place relative to this library, never found through a search
// path: it is as trusted as the core itself.
std::string module_path() {
  auto core = code_file(reinterpret_cast<const void*>(&module_path));
  if (core.empty()) return kYamlModule;
  return (core.parent_path() / kYamlModule).string();
}

struct Loaded {
  YamlEntry entry = nullptr;
  std::string path;
  std::string error;
};

const Loaded& load() {
  static Loaded loaded;
  static std::once_flag once;
  std::call_once(once, [] {
    loaded.path = module_path();
    before_load(loaded.path);
    // Never unloaded: trees and exceptions it made may outlive any scope here.
    void* handle = ::dlopen(loaded.path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!handle) {
      const char* why = ::dlerror();
      loaded.error = why ? why : "unknown error";
      return;
    }
    loaded.entry = reinterpret_cast<YamlEntry>(::dlsym(handle, kYamlEntry));
    if (!loaded.entry) loaded.error = std::string("no symbol ") + kYamlEntry;
  });
  return loaded;
}

}  // namespace

Node parse_yaml(std::string_view text, const std::shared_ptr<const std::string>& file) {
  const Loaded& module = load();
  if (!module.entry)
    throw Error(code::kUnknownFormat,
                "cannot read yaml: cordon's yaml module '" + module.path +
                    "' cannot be loaded: " + module.error,
                "reinstall cordon, or write the policy in toml", Location{*file});
  Node root;
  YamlCall call{text, &file, &root};
  module.entry(&call);
  return root;
}

}  // namespace cordon::detail
