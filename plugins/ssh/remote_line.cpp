// The remote script of a run. Pure.
#include "remote_line.hpp"

#include <cordon/sdk/error.hpp>

namespace cordon::ssh {

std::string sh_quote(std::string_view value) {
  if (value.find('\0') != std::string_view::npos)
    throw Error(code::kControlChar, "an argument for the remote host contains a NUL byte",
                "a NUL byte cannot be passed to a program; remove it");
  std::string out = "'";
  for (char c : value) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

namespace {

std::string words(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += " " + sh_quote(item);
  return out;
}

// The chain the script execs, outermost first; each program execs the next, so the marker's
// PID is the first of them and every one stays in its process group.
std::string chain(const RemoteRun& run, const Wrappers& w) {
  std::string out;
  if (w.no_new_privs) out += "setpriv --no-new-privs --pdeathsig KILL -- ";
  if (w.pid_namespace)
    out += std::string("unshare ") + (w.user_ns ? "--user --map-current-user " : "") +
           "--pid --fork --kill-child -- ";
  // In a pid namespace timeout is also its first process: a command there as pid 1 would
  // ignore its own signals. A duration of 0 sets no timeout.
  if (w.timeout && (run.backstop_seconds || w.pid_namespace))
    out += "timeout --foreground -s KILL " + std::to_string(run.backstop_seconds.value_or(0)) + " ";
  out += "env -i";
  for (const auto& [name, value] : run.env) out += " " + sh_quote(name + "=" + value);
  if (run.home_from_login) out += " \"HOME=$HOME\"";
  // The program is exec'd by a shell of its own, so argv[0] is looked up in the granted PATH and
  // never read as an option or an assignment by env. That shell exports a PWD of its own.
  out += run.env.count("PWD") ? " /bin/sh -c 'exec \"$@\"' cordon-ssh"
                              : " /bin/sh -c 'unset PWD; exec \"$@\"' cordon-ssh";
  out += words(run.argv);
  return out;
}

}  // namespace

std::string remote_line(const RemoteRun& run, const Wrappers& wrappers) {
  // The program is exec'd by the remote /bin/sh, whose `exec` may read a leading '-' as its own
  // option (bash: `exec -l` runs nothing and succeeds).
  if (!run.argv.empty() && !run.argv[0].empty() && run.argv[0][0] == '-')
    throw Error(code::kFlagInjection, "the program's name starts with '-'",
                "name the program by a path, e.g. './" + run.argv[0] + "'");
  std::string script = "cd -- " + sh_quote(run.workspace) +
                       " || { echo \"cordon-ssh: cannot enter the remote workspace\" >&2; exit " +
                       std::to_string(kSetupFailed) + "; }\n";
  for (const auto& [flag, value] : run.ulimits)
    script += std::string("ulimit -") + flag + " " + std::to_string(value) +
              " || { echo \"cordon-ssh: ulimit -" + flag + " failed\" >&2; exit " +
              std::to_string(kSetupFailed) + "; }\n";
  script += "printf '" + std::string(kPidMarker) + "%s\\n' \"$$\"\n";
  script += "exec " + chain(run, wrappers) + "\n";
  return "exec /bin/sh -c " + sh_quote(script) + " cordon-ssh";
}

std::string kill_line(long pid, std::string_view signal) {
  return "kill -s " + std::string(signal) + " -- -" + std::to_string(pid) + " 2>/dev/null; true";
}

}  // namespace cordon::ssh
