// Unknown keys of a backend's settings table (cordon/sdk/settings.hpp).
#include <cordon/sdk/settings.hpp>

#include <algorithm>
#include <string>

#include "policy_keys.hpp"

namespace cordon::sdk {

namespace {

// "a, b and c"
std::string listed(const std::vector<std::string_view>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " and " : ", ";
    out += names[i];
  }
  return out;
}

}  // namespace

bool known_setting(std::string_view key, const std::vector<std::string_view>& known) {
  return std::find(known.begin(), known.end(), key) != known.end();
}

std::vector<Error> unknown_settings(std::string_view backend, const boost::json::object& settings,
                                    const std::vector<std::string_view>& known) {
  std::vector<Error> errors;
  std::vector<std::string> names(known.begin(), known.end());
  for (const auto& kv : settings) {
    if (known_setting(kv.key(), known)) continue;
    std::string message =
        "unknown setting 'backends." + std::string(backend) + "." + std::string(kv.key()) + "'";
    if (auto near = detail::nearest(kv.key(), names)) message += " (did you mean '" + *near + "'?)";
    errors.emplace_back(code::kBadSettings, message,
                        known.empty()
                            ? "backend '" + std::string(backend) + "' takes no settings"
                            : "backend '" + std::string(backend) + "' takes " + listed(known));
  }
  return errors;
}

}  // namespace cordon::sdk
