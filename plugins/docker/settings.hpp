// [backends.docker]: where the daemon is, which image, as whom, with which extra mounts, and
// the warm pool; validated with key paths (CRD2015). Pure.
#pragma once

#include <cordon/sdk/error.hpp>

#include <boost/json/object.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
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

/// The highest uid or gid a `user` setting may give ((uid_t)-1 means "no change" to the kernel).
inline constexpr std::uint64_t kMaxUserId = 4294967294;

/// Why `user` is not a valid `backends.docker.user` (empty when it is): each side digits or a
/// name of letters, digits, '_', '.' and '-' (no sign, no space), and neither side root (0
/// however many zeros, or "root"). A name the image maps to 0 is caught in the container by
/// the waiter, which refuses to run anything as uid or gid 0. Pure.
std::string user_problem(std::string_view user);

/// Every problem of `table`, each a CRD2015 error naming `backends.docker.<key>`.
std::vector<Error> validate_settings(const boost::json::object& table);

/// The settings in `table`; call after validate_settings found nothing.
Settings parse_settings(const boost::json::object& table);

}  // namespace cordon::docker
