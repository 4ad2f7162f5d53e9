// Validation of [backends.landlock]. Pure.
#include "settings.hpp"

#include <cordon/sdk/settings.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace cordon::landlock {

namespace {

const std::vector<std::string_view> kKeys = {"uid", "gid"};
constexpr std::int64_t kMaxId = 4294967294;  // (uid_t)-1 means "no change" to the kernel

std::string key_path(std::string_view key) { return "backends.landlock." + std::string(key); }

// An id setting: a JSON integer in 1..4294967294, however the parser stored it (a C++ caller may
// hand over an unsigned 0). No string is accepted, so "+0", " 0" or "root" cannot spell root.
// Returns the error text, or empty when valid.
std::string check_id(const boost::json::value& value) {
  if (!value.is_int64() && !value.is_uint64()) return "must be an integer";
  if (value.is_uint64() ? value.get_uint64() == 0 : value.get_int64() == 0)
    return "must not be 0: the sandbox never runs as host root";
  if (value.is_uint64() && value.get_uint64() > static_cast<std::uint64_t>(kMaxId))
    return "must be at most " + std::to_string(kMaxId);
  if (value.is_int64() && (value.get_int64() < 0 || value.get_int64() > kMaxId))
    return "must be between 1 and " + std::to_string(kMaxId);
  return {};
}

std::optional<std::uint32_t> id_value(const boost::json::value& value) {
  if (!check_id(value).empty()) return std::nullopt;
  return static_cast<std::uint32_t>(value.is_int64() ? value.get_int64() : value.get_uint64());
}

}  // namespace

std::vector<Error> validate_settings(const boost::json::object& table) {
  std::vector<Error> errors = sdk::unknown_settings("landlock", table, kKeys);
  for (const auto& kv : table) {
    std::string_view key = kv.key();
    if (!sdk::known_setting(key, kKeys)) continue;
    if (auto problem = check_id(kv.value()); !problem.empty())
      errors.emplace_back(code::kBadSettings, "'" + key_path(key) + "' " + problem,
                          "give a host uid/gid such as 65534; it is used when cordon runs as root");
  }
  return errors;
}

Settings parse_settings(const boost::json::object& table) {
  Settings settings;
  if (const auto* v = table.if_contains("uid")) settings.uid = id_value(*v);
  if (const auto* v = table.if_contains("gid")) settings.gid = id_value(*v);
  return settings;
}

}  // namespace cordon::landlock
