// Who the sandbox is: the host uid/gid it runs as and how its user namespace maps them.
//
// The namespace maps exactly one uid and one gid, each to itself ("S S 1"), so files keep their
// owners and the command is an ordinary user inside. An unprivileged caller can only map
// itself; when cordon runs as root the command must still hold no host privilege, so it runs
// as the workspace's owner (when that is not root), the configured `uid`, or nobody (65534).
#pragma once

#include <cordon/sdk/identity.hpp>

#include "settings.hpp"

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>

namespace cordon::landlock {

/// The host uid used when cordon is root and nothing better is known.
inline constexpr uid_t kNobody = sdk::kNobody;

/// The identity a run uses.
struct Identity {
  uid_t uid = 0;                    ///< host uid, also the uid inside (mapped 1:1)
  gid_t gid = 0;                    ///< host gid, also the gid inside
  bool parent_writes_maps = false;  ///< cordon is root: it writes the maps, groups are dropped
  std::string reason;               ///< why this uid, for the report

  /// "S S 1\n", the uid_map line.
  std::string uid_map() const;
  /// "G G 1\n", the gid_map line.
  std::string gid_map() const;
};

/// What choose_identity looks at.
struct IdentityInput {
  uid_t euid = 0;  ///< cordon's effective uid
  gid_t egid = 0;
  uid_t workspace_uid = 0;  ///< owner of the workspace directory
  gid_t workspace_gid = 0;
  Settings settings;
  /// The primary gid of a uid (from the user database), if it has one.
  std::function<std::optional<gid_t>(uid_t)> primary_gid;
};

/// Decides the identity by the SDK's rule (sdk::choose_command_user), naming
/// backends.landlock.uid; never uid 0 or gid 0 when euid is 0. Pure apart from `primary_gid`.
Identity choose_identity(const IdentityInput& input);

/// The primary gid of `uid` from the user database (getpwuid_r), if any.
std::optional<gid_t> lookup_primary_gid(uid_t uid);

}  // namespace cordon::landlock
