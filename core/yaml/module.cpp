// The YAML module's entry point: libcordon-core loads this module (and yaml-cpp with it) only
// when a policy is written in YAML, so that no other start of cordon pays for yaml-cpp.
#include "policy_parse.hpp"
#include "yaml_module.hpp"

extern "C" __attribute__((visibility("default"))) void cordon_parse_yaml_v1(
    const cordon::detail::YamlCall* call) {
  *call->root = cordon::detail::parse_yaml(call->text, *call->file);
}
