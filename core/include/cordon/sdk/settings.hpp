// What every backend checks the same way in its settings table ([backends.<name>]): the keys it
// does not know. A typo is an error naming the key path and the nearest known key, never a
// setting silently ignored.
#pragma once

#include <cordon/sdk/error.hpp>
#include <cordon/sdk/export.hpp>

#include <boost/json/object.hpp>

#include <string_view>
#include <vector>

namespace cordon::sdk {

/// One CRD2015 error for each key of `settings` that is not in `known`, in the table's order:
/// "unknown setting 'backends.<backend>.<key>'", with " (did you mean '<nearest>'?)" when a
/// known key is close to it, and the hint "backend '<backend>' takes a, b and c". Pure.
CORDON_API std::vector<Error> unknown_settings(std::string_view backend,
                                               const boost::json::object& settings,
                                               const std::vector<std::string_view>& known);

/// True when `key` is one of `known`.
CORDON_API bool known_setting(std::string_view key, const std::vector<std::string_view>& known);

}  // namespace cordon::sdk
