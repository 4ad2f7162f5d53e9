// [backends.landlock]: the settings of this backend, validated with key paths (CRD2015).
#pragma once

#include <cordon/sdk/error.hpp>

#include <boost/json/object.hpp>

#include <cstdint>
#include <optional>
#include <vector>

namespace cordon::landlock {

/// The settings table, parsed. Both keys matter only when cordon runs as root.
struct Settings {
  /// Host uid the sandbox runs as when cordon is root (never 0). Default: the workspace's
  /// owner when that is not root, else 65534 (nobody).
  std::optional<std::uint32_t> uid;
  /// Host gid to go with it (never 0). Default: the uid's primary group, else 65534.
  std::optional<std::uint32_t> gid;
};

/// Every problem of `table`, each a CRD2015 error naming `backends.landlock.<key>`.
std::vector<Error> validate_settings(const boost::json::object& table);

/// The settings in `table`; values that do not validate are left unset.
Settings parse_settings(const boost::json::object& table);

}  // namespace cordon::landlock
