// Shared pieces of the policy writers (TOML, YAML, JSON, JSON Schema).
#pragma once

#include <boost/json/value.hpp>

#include <string>
#include <string_view>

namespace cordon::detail {

/// JSON text indented by two spaces; lists of plain values stay on one line.
std::string pretty_json(const boost::json::value& value);

/// A float that reads back as a float in TOML (`yaml` false) or YAML (`yaml` true).
std::string number_text(double value, bool yaml);

/// A double-quoted string valid in TOML, YAML and JSON alike.
std::string quoted_string(std::string_view text);

}  // namespace cordon::detail
