// The commands cordon starts in a sandbox, as argv for envd's Start: the run's own script, the
// copy-in as root, the terminate. Every value travels as a positional argument of a fixed
// script, never as shell text. Pure.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "envd.hpp"

namespace cordon::e2b {

/// What the run's script does before it execs the command.
struct RunScript {
  std::string user;
  std::string workspace;                                ///< `cd` there (the sandbox's path)
  std::optional<std::string> stdin_file;                ///< stdin from this file; else /dev/null
  std::map<std::string, std::string> env;               ///< exactly this environment, plus HOME
  std::vector<std::pair<char, std::uint64_t>> ulimits;  ///< ('n', 64): `ulimit -n 64`
  /// Refuse to start when the user is root or can become root with sudo: a policy that
  /// confines writes or asks for an unprivileged identity needs both.
  bool require_unprivileged = false;
  std::vector<std::string> argv;
};

/// The line the script prints on stdout just before it execs the command; everything before it
/// on stderr is the script's own (a setup failure).
inline constexpr std::string_view kReady = "cordon-e2b:ready\n";

/// The run's Start: /bin/sh -c SCRIPT with the values as arguments. The command gets a fresh
/// 0700 HOME, its own session (so its process group is its whole tree, signalled by
/// terminate_spec), and the environment of `env -i`.
StartSpec run_spec(const RunScript& run);

/// The copy-in, as root: extract `archive` (a path in the sandbox) at /, make the workspace if
/// it is not there, drop the marker (kMarkerFile), hand each of `write_paths` (made when missing)
/// to `uid` (a number: the template's /etc/passwd need not name the user).
StartSpec prepare_spec(const std::string& workspace, const std::optional<std::string>& archive,
                       const std::string& uid, const std::vector<std::string>& write_paths);

/// As `user`: SIGTERM to the process group of `pid` (the run's session).
StartSpec terminate_spec(long pid, const std::string& user);

/// As `user` (never root): SIGKILL to every process of the user, until none is left — the
/// run's whole tree, setsid() escapees included, while the sandbox stays for the download.
StartSpec kill_all_spec(const std::string& user);

/// As root: a pax archive (to stdout) of the regular files under `write_paths` written after
/// the marker prepare_spec left.
StartSpec download_spec(const std::vector<std::string>& write_paths);

/// Where prepare_spec leaves its marker, older than anything the command writes.
inline constexpr std::string_view kMarkerFile = "/tmp/.cordon-e2b-copied";

}  // namespace cordon::e2b
