// The line an ssh exec request carries: sshd never receives an argv, only one string that the
// remote account's login shell runs with `-c`. So every value is quoted for POSIX sh, and the
// command line is a fixed script of cordon's with the run's values quoted into it. Pure.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::ssh {

/// `value` in single quotes, each `'` as `'\''`; "" becomes `''`. Throws cordon::Error (CRD4003)
/// for a NUL byte, which no remote program can receive.
std::string sh_quote(std::string_view value);

/// What wraps the command on the remote host, each part only when the probe proved it there.
struct Wrappers {
  bool no_new_privs = false;  ///< `setpriv --no-new-privs --pdeathsig KILL`
  /// `unshare --pid --fork --kill-child` (with `--user --map-current-user` when `user_ns`): the
  /// command's tree lives in a pid namespace, so killing its first process ends all of it.
  /// Needs `timeout`, which is that first process.
  bool pid_namespace = false;
  bool user_ns = false;
  bool timeout = false;  ///< GNU `timeout --foreground`: the backstop when cordon is gone
};

/// One command run: what the remote script does before it execs the program.
struct RemoteRun {
  std::string workspace;                   ///< `cd` there first (remote path)
  std::map<std::string, std::string> env;  ///< exactly this environment (env -i), plus HOME
  bool home_from_login = true;             ///< HOME = the login's own $HOME
  std::vector<std::pair<char, std::uint64_t>> ulimits;  ///< ('n', 64): `ulimit -n 64`
  std::optional<std::uint64_t> backstop_seconds;  ///< `timeout -s KILL N` when Wrappers::timeout
  std::vector<std::string> argv;
};

/// The marker the script prints on stdout just before it execs the command: "cordon-ssh:PID\n".
/// PID is the remote process (and process group, sshd made it a session leader) of the run.
inline constexpr std::string_view kPidMarker = "cordon-ssh:";

/// The exit status the script leaves with when it fails before the command exists (cd, ulimit):
/// its message is on stderr and no marker was printed.
inline constexpr int kSetupFailed = 125;

/// The line for ssh_channel_request_exec: `exec /bin/sh -c '<script>' cordon-ssh`. Only single
/// quotes and plain words reach the login shell, so any POSIX-family shell (sh, bash, dash, ksh,
/// zsh) parses it the same; the probe checks that the host's does (probe_line's round trip).
/// Throws cordon::Error: CRD4003 for a NUL byte, CRD4002 for a program name that starts with '-'.
std::string remote_line(const RemoteRun& run, const Wrappers& wrappers);

/// The line that kills a run's process group: `kill -s KILL -- -PID` (and TERM for terminate).
std::string kill_line(long pid, std::string_view signal);

}  // namespace cordon::ssh
