// [backends.docker]: where the daemon is, which image, as whom, with which extra mounts, and
// the warm pool; validated with key paths (CRD2015). Pure.
#pragma once

#include <cordon/error.hpp>

#include <boost/json/object.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cordon::docker {

/// One extra host path the operator mounts explicitly ("SRC:DST[:ro|rw]", read-only unless rw).
struct ExtraMount {
  std::string source;
  std::string target;
  bool writable = false;
  bool operator==(const ExtraMount&) const = default;
};

/// The settings table, parsed.
struct Settings {
  std::string image;   ///< required: cordon has no default image and never pulls
  std::string socket;  ///< unix socket path; empty: `host`, DOCKER_HOST, then the default
  std::string host;    ///< unix:// or tcp:// address
  /// "uid", "uid:gid" or a name the image knows; empty: the workspace's owner, or 65534.
  std::string user;
  std::vector<ExtraMount> mounts;
  std::string runtime;     ///< an OCI runtime the daemon has (e.g. "runsc"); empty: its default
  std::uint32_t pool = 0;  ///< containers kept started ahead; 0: none
};

/// The most containers a pool may keep ahead.
inline constexpr std::uint32_t kMaxPool = 32;

/// Every problem of `table`, each a CRD2015 error naming `backends.docker.<key>`.
std::vector<Error> validate_settings(const boost::json::object& table);

/// The settings in `table`; call after validate_settings found nothing.
Settings parse_settings(const boost::json::object& table);

}  // namespace cordon::docker
