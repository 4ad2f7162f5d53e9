// Duplicate keys in JSON text: Boost.JSON keeps the last of them, so `{"read": [...],
// "read": "host"}` would silently become the wider one. Internal to the core.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace cordon::detail {

/// The JSON pointer of the first member whose key its object already has ("/policy/read"), or
/// nullopt when there is none (or the text is not valid JSON: the parser says why). Pure.
std::optional<std::string> first_duplicate_key(std::string_view json, std::size_t max_depth = 32);

}  // namespace cordon::detail
