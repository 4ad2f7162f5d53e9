// The scripts. Each is constant text; the values follow it as "$1", "$2", ...
#include "script.hpp"

namespace cordon::e2b {

namespace {

constexpr const char* kName = "cordon-e2b";

std::string fail(std::string_view what) {
  return " || { echo 'cordon-e2b: " + std::string(what) + "' >&2; exit 125; }\n";
}

// Root holds the whole VM: nothing in it is confined. A user that sudo lets become root holds
// it too, unless the command runs with no_new_privs (setpriv), which no setuid program undoes.
constexpr const char* kUnprivileged =
    "while read -r k r e _; do [ \"$k\" = Uid: ] && break; done </proc/$$/status\n"
    "[ \"$r\" != 0 ] && [ \"$e\" != 0 ] || { echo 'cordon-e2b: the sandbox runs the command as "
    "root' >&2; exit 125; }\n"
    "if ! command -v setpriv >/dev/null 2>&1 && command -v sudo >/dev/null 2>&1 && "
    "sudo -n true 2>/dev/null; then echo 'cordon-e2b: the sandbox user can become root with "
    "sudo' >&2; exit 125; fi\n";

}  // namespace

StartSpec run_spec(const RunScript& run) {
  std::string s = "cd -- \"$1\"" + fail("cannot enter the workspace");
  s += "if [ -n \"$2\" ]; then exec <\"$2\"; else exec </dev/null; fi" + fail("no stdin");
  s += "shift 2\n";
  if (run.require_unprivileged) s += kUnprivileged;
  for (const auto& [flag, value] : run.ulimits)
    s += std::string("ulimit -") + flag + " " + std::to_string(value) +
         fail(std::string("ulimit -") + flag + " failed");
  s += "h=/tmp/cordon-home-$$; mkdir -m 700 \"$h\"" + fail("cannot make HOME");
  // A process that leads its group already (envd may make it one) keeps it; otherwise setsid()
  // makes this process, and so the command, the leader of a new session and group.
  s += "set -- env -i \"HOME=$h\" \"$@\"\n"
       "if command -v setpriv >/dev/null 2>&1; then set -- setpriv --no-new-privs \"$@\"; fi\n"
       "read -r _ _ _ _ g _ </proc/$$/stat\n"
       "if [ \"$g\" != \"$$\" ]; then set -- setsid \"$@\"; fi\n"
       "printf 'cordon-e2b:ready\\n'\n"
       "exec \"$@\"\n";
  StartSpec spec;
  spec.user = run.user;
  spec.cmd = "/bin/sh";
  spec.args = {"-c", s, kName, run.workspace, run.stdin_file.value_or("")};
  // env -i takes the assignments, then execs a shell of cordon's that execs the command: argv[0]
  // is looked up in the granted PATH and can never be read as an option or an assignment.
  for (const auto& [name, value] : run.env) spec.args.push_back(name + "=" + value);
  spec.args.push_back("/bin/sh");
  spec.args.push_back("-c");
  spec.args.push_back(run.env.count("PWD") ? "exec \"$@\"" : "unset PWD; exec \"$@\"");
  spec.args.push_back(kName);
  spec.args.insert(spec.args.end(), run.argv.begin(), run.argv.end());
  return spec;
}

StartSpec prepare_spec(const std::string& workspace, const std::optional<std::string>& archive,
                       const std::string& uid, const std::vector<std::string>& write_paths) {
  std::string s = "ws=$1 archive=$2 uid=$3; shift 3\n";
  s += "[ -z \"$archive\" ] || tar -x -p -f \"$archive\" -C /" + fail("extracting failed");
  s += "[ -z \"$archive\" ] || rm -f -- \"$archive\"\n";
  s += "[ -d \"$ws\" ] || mkdir -p -m 755 -- \"$ws\"" + fail("cannot make the workspace");
  s += "for w in \"$@\"; do [ -d \"$w\" ] || mkdir -p -- \"$w\"; chown -R -- \"$uid\" \"$w\"" +
       fail("cannot hand a write path to the user") + "done\n";
  s += "touch -- " + std::string(kMarkerFile) + fail("cannot leave the marker");
  StartSpec spec;
  spec.user = "root";
  spec.cmd = "/bin/sh";
  spec.args = {"-c", s, kName, workspace, archive.value_or(""), uid};
  spec.args.insert(spec.args.end(), write_paths.begin(), write_paths.end());
  return spec;
}

StartSpec terminate_spec(long pid, const std::string& user) {
  StartSpec spec;
  spec.user = user;
  spec.cmd = "/bin/sh";
  spec.args = {"-c", "kill -s TERM -- -\"$1\" 2>/dev/null || kill -s TERM \"$1\"", kName,
               std::to_string(pid)};
  return spec;
}

StartSpec kill_all_spec(const std::string& user) {
  StartSpec spec;
  spec.user = user;
  spec.cmd = "/bin/sh";
  // kill(-1) spares the caller; a fork racing the first round is caught by the next.
  spec.args = {"-c",
               "i=0; while kill -s KILL -- -1 2>/dev/null && [ $i -lt 1000 ]; do i=$((i+1)); done",
               kName};
  return spec;
}

StartSpec download_spec(const std::vector<std::string>& write_paths) {
  std::string s =
      "for w in \"$@\"; do [ -d \"$w\" ] && find \"$w\" -xdev -type f -newer " +
      std::string(kMarkerFile) +
      " -print0; done | tar -c -f - --format=pax --null --no-recursion -T - 2>/dev/null\n";
  StartSpec spec;
  spec.user = "root";
  spec.cmd = "/bin/sh";
  spec.args = {"-c", s, kName};
  spec.args.insert(spec.args.end(), write_paths.begin(), write_paths.end());
  return spec;
}

}  // namespace cordon::e2b
