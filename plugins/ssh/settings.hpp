// [backends.ssh]: which host, as whom, trusting which host keys. Pure.
//
//   host             the remote host (name or address)                      required, or:
//   hosts            a fleet: ["build1", "build2:2222", "[fe80::1]:22"]; the other settings
//                    are shared, a port in an entry replaces `port`
//   port             1-65535                                                 22
//   user             the login                                               the local user
//   identity         a private key file, or "agent" (ssh-agent, SSH_AUTH_SOCK) required
//   known_hosts      the known-hosts file the host's key must be in          ~/.ssh/known_hosts
//   connect_timeout  seconds for the connection and the handshake, 1-300      10
//   workspace        the command's directory on the remote host (absolute)   the local workspace
//   cordon           the remote cordon (absolute path), or "off": never use one  `cordon` in PATH
#pragma once

#include <cordon/sdk/error.hpp>

#include <boost/json/object.hpp>

#include <optional>
#include <string>
#include <vector>

namespace cordon::ssh {

/// The settings of one target host, validated.
struct Target {
  std::string host;
  int port = 22;
  std::string user;
  std::string identity;  ///< a key file's path, or "agent"
  std::string known_hosts;
  long connect_timeout = 10;
  std::optional<std::string> workspace;
  /// The remote cordon to run commands under; "off": the plain-shell path only; unset: the
  /// login's `cordon` in PATH, when there is one.
  std::optional<std::string> cordon;

  /// "user@host:port", how messages name the target.
  std::string name() const;
  /// What a connection is kept under: two runs with the same key share it.
  std::string key() const;
  bool operator==(const Target&) const = default;
};

/// Every mistake in `settings`, each naming its key (CRD2015). Empty when valid.
std::vector<Error> validate(const boost::json::object& settings);

/// The targets `settings` name: its one host, or each of its `hosts` in order (duplicates once).
/// Call only with settings that validate.
std::vector<Target> targets_of(const boost::json::object& settings, const std::string& local_user,
                               const std::string& home);

/// The target `settings` name, with defaults filled from `local_user` and `home` (the local
/// user's name and home directory). Call only with settings that validate.
Target target_of(const boost::json::object& settings, const std::string& local_user,
                 const std::string& home);

}  // namespace cordon::ssh
