// The backend toolkit: who the command runs as.
//
// A command never runs with cordon's privileges. When cordon is unprivileged the command runs as
// cordon's own user. When cordon is root the command runs as another user, with no
// supplementary groups and never uid 0 or gid 0, chosen in this order:
//   1. the uid (and gid) the backend's settings name;
//   2. the owner of the workspace, when that is not root;
//   3. nobody (65534:65534).
// Its group is the setting's gid, else the uid's primary group (user database), else the
// workspace's group, never 0, else 65534. Every backend that runs commands on this host as
// cordon's children uses this rule, so the same workspace means the same user on each.
#pragma once

#include <sys/types.h>
#include <cordon/sdk/export.hpp>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

namespace cordon::sdk {

/// The host uid and gid used when cordon is root and nothing better is known.
inline constexpr uid_t kNobody = 65534;

/// Who the command runs as, and why.
struct CommandUser {
  uid_t uid = 0;
  gid_t gid = 0;
  /// cordon is root: the command is another user, and it holds no supplementary groups
  /// (setgroups(0) before it drops to `uid`/`gid`).
  bool other_user = false;
  std::string reason;  ///< for the run's report: "the workspace's owner (uid 1000)"
};

/// What choose_command_user looks at.
struct CommandUserInput {
  uid_t euid = 0;  ///< cordon's effective uid
  gid_t egid = 0;
  uid_t workspace_uid = 0;  ///< owner of the workspace directory
  gid_t workspace_gid = 0;
  std::optional<uid_t> uid;  ///< the backend's setting, when cordon is root (never 0)
  std::optional<gid_t> gid;
  std::string setting = "uid";  ///< how the reason names the uid setting: "backends.mine.uid"
  /// The primary gid of a uid (from the user database), if it has one; may be empty.
  std::function<std::optional<gid_t>(uid_t)> primary_gid;
};

/// Decides the command's user by the rule above; never uid 0 or gid 0 when euid is 0. Pure
/// apart from the `primary_gid` callback.
CORDON_API CommandUser choose_command_user(const CommandUserInput& input);

/// choose_command_user for this process and `workspace` (its owner and group by lstat, the
/// user database for primary groups); the backend's settings give `uid` / `gid` and the name
/// `setting` the reason uses. A workspace that cannot be read counts as root's.
CORDON_API CommandUser command_user(const std::filesystem::path& workspace,
                                    std::optional<uid_t> uid = std::nullopt,
                                    std::optional<gid_t> gid = std::nullopt,
                                    const std::string& setting = "uid");

}  // namespace cordon::sdk
