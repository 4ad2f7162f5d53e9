// The call between libcordon-core and its YAML module (core/yaml), built from the same
// sources and compiler: C linkage for the symbol, C++ types behind it.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "policy_node.hpp"

namespace cordon::detail {

/// One parse: the text, its file name for messages, and where the tree goes. Errors are
/// thrown as cordon::Error (exported by the core, so they cross the module boundary intact).
struct YamlCall {
  std::string_view text;
  const std::shared_ptr<const std::string>* file;
  Node* root;
};

/// The module's entry point; the version in the name changes with YamlCall.
inline constexpr const char* kYamlEntry = "cordon_parse_yaml_v1";
using YamlEntry = void (*)(const YamlCall*);

/// The module's file name, in the directory `cordon` (next to libcordon-core).
inline constexpr const char* kYamlModule = "cordon/cordon-policy-yaml.so";

}  // namespace cordon::detail
