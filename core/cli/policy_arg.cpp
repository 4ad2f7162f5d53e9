// Finding a policy given on the command line by file or by preset name.
#include "policy_arg.hpp"

#include <cordon/policy_loader.hpp>

#include <algorithm>
#include <filesystem>

namespace cordon::cli {

Policy load_policy_arg(const std::string& arg) {
  const auto& names = preset_names();
  bool is_preset = std::find(names.begin(), names.end(), arg) != names.end();
  if (is_preset && !std::filesystem::exists(arg)) return load_preset(arg);
  return load_policy_file(arg);
}

}  // namespace cordon::cli
