// The backend toolkit: a command run as a supervised child process of cordon.
//
// What every local backend needs around its command, done once: the granted environment and
// working directory, rlimits, stdin fed without SIGPIPE, stdout and stderr streamed to the
// OutputSink as they arrive, the deadline (SIGTERM to the whole tree, SIGKILL after a grace),
// the StopToken (a request made before the child exists is not lost), and exec failures mapped
// to CRD5004 / CRD5005 and exit statuses 127 / 126. A supervisor process is the child
// subreaper of the whole tree, so when run_child() returns no descendant of the command is
// alive, setsid() or not.
//
//   cordon ──fork──► supervisor (PR_SET_CHILD_SUBREAPER, owns the deadline; enters the
//                    │           spec's namespaces)
//                    └─fork──► command (process-group leader, its mount namespace, rlimits,
//                                       its user, execve)
//
// The built-in `none` backend is exactly child_spec() → run_child() → child_result().
#pragma once

#include <linux/filter.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <cordon/sdk/backend.hpp>
#include <cordon/sdk/export.hpp>
#include <cordon/sdk/stop_token.hpp>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cordon::sdk {

/// The user a command becomes before execve (ChildSpec::user).
struct ChildUser {
  uid_t uid = 0;
  gid_t gid = 0;
};

/// What to run. Everything is prepared before the fork: after it the child processes only make
/// async-signal-safe system calls.
struct ChildSpec {
  std::vector<std::string> exec_paths;  ///< argv[0] resolved against the granted PATH, in order
  std::vector<std::string> argv;
  std::vector<std::string> env;  ///< "NAME=value", exactly the command's environment
  std::string cwd;
  std::vector<std::pair<int, rlim_t>> rlimits;  ///< resource, soft = hard limit
  std::optional<std::string> stdin_data;        ///< nullopt: /dev/null
  std::optional<std::chrono::steady_clock::time_point> deadline;
  std::chrono::milliseconds grace{1000};  ///< SIGTERM to SIGKILL at the deadline
  /// Forbid the command to signal its supervisor (seccomp). Set it when
  /// child_supervision_supported() says the guard works here.
  bool guard = true;
  std::shared_ptr<StopToken> stop;  ///< watched while the command runs
  /// A seccomp filter the command's process installs last, just before execve (with
  /// no_new_privs): cordon/sdk/seccomp.hpp's compile_denials(), e.g. to prove
  /// proc.no_subprocess. Empty: none.
  std::vector<sock_filter> filter;
  /// Namespaces of the command, CLONE_NEW* flags of <sched.h>; 0: none. The supervisor enters
  /// all but the mount namespace with one unshare() before it forks the command, so they hold
  /// the whole tree:
  ///  - CLONE_NEWUSER: a user namespace that maps the supervisor's uid and gid (and `user`'s)
  ///    each to itself; when `user` is unset, setgroups() is denied in it. Unprivileged, it is
  ///    what lets the others be made. The command keeps its uid, so execve() leaves it no
  ///    capability.
  ///  - CLONE_NEWPID: the command runs in a new pid namespace, and cannot name a process outside
  ///    it. Its pid 1 is a small init the toolkit leaves behind (a command as pid 1 would not die
  ///    of a SIGTERM or its own raise()): it reaps, and passes the command's exit status or
  ///    signal on. When the command ends, so does the init, and the kernel kills every process
  ///    of the namespace.
  ///  - CLONE_NEWNET: a network namespace with only loopback, which the command's process brings
  ///    up.
  ///  - CLONE_NEWIPC: SysV IPC and POSIX message queues of its own. CLONE_NEWUTS: a hostname of
  ///    its own.
  ///  - CLONE_NEWNS: made by the command's process (the supervisor keeps the host's /proc),
  ///    every mount private to it; with CLONE_NEWPID a fresh /proc of the new pid namespace is
  ///    mounted on /proc, and with CLONE_NEWIPC a fresh mqueue filesystem on /dev/mqueue when
  ///    that directory exists. Mounts elsewhere (another procfs, an mqueue mount) stay visible.
  /// A failure is ChildStage::namespaces: the command did not run.
  int namespaces = 0;
  /// When set (cordon is root: cordon/sdk/identity.hpp's command_user() with other_user), the
  /// command's process drops every supplementary group (setgroups(0)), then calls setgid() and
  /// setuid() before execve, after the rlimits and before entering `cwd`. A failure is
  /// ChildStage::user.
  std::optional<ChildUser> user;
};

/// Where the child failed before the command started.
enum class ChildStage {
  none = 0,
  chdir = 1,
  rlimit = 2,
  exec = 3,
  fork = 4,
  setup = 5,
  guard = 6,
  filter = 7,      ///< ChildSpec::filter could not be installed
  namespaces = 8,  ///< ChildSpec::namespaces: failed_item is the CLONE_NEW* flag, 0 for unshare
  user = 9,        ///< ChildSpec::user: failed_item is the uid
  unwaitable = 10  ///< nothing started: this process cannot wait for it (children_not_waitable())
};

/// How a supervised run ended.
struct ChildOutcome {
  ChildStage failed_stage = ChildStage::none;  ///< none: the command was executed
  int error = 0;                               ///< errno of the failed stage
  int failed_item = 0;             ///< rlimit: the resource; namespaces: the flag; user: the uid
  std::optional<int> wait_status;  ///< the command's status, as from waitpid
  bool timed_out = false;
  int leftovers = 0;            ///< descendants still alive after the command exited, all killed
  double cpu_user_seconds = 0;  ///< user time of the whole tree
  double cpu_system_seconds = 0;
  bool stopped = false;              ///< the stop token asked for a kill and the tree was killed
  std::optional<std::string> fault;  ///< the supervisor itself failed
};

/// PATH search for `program` in `path_var` (an empty entry is the working directory); a name
/// with a slash is returned alone. Pure.
CORDON_API std::vector<std::string> exec_candidates(const std::string& program,
                                                    const std::string& path_var);

/// The PATH searched when the plan grants none.
inline constexpr const char* kDefaultSearchPath = "/usr/local/bin:/usr/bin:/bin";

/// The error of an execve() of `program` that failed with `err`: CRD5004 when nothing was found
/// there (ENOENT, ENOTDIR, ENAMETOOLONG), else CRD5005. `hint` says where the program is
/// looked for; empty: a hint for a search of the granted PATH on the host.
CORDON_API Error exec_failure(const std::string& program, int err, std::string hint = {});

/// The error of a program the sandbox masks for process.blocked_commands, refused at its exec
/// (EACCES): CRD4005, as a blocked command is refused before any run (exit status 126).
/// `program` is the command's program as given, `masked` the path masked in the sandbox that
/// it led to (empty: `program` itself), `blocked` the blocked commands it is or provides as an
/// applet; `exact` false when the backend only knows that it is one of them.
CORDON_API Error masked_program_failure(const std::string& program, const std::string& masked,
                                        const std::vector<std::string>& blocked, bool exact);

/// The exit status a shell gives an execve() that failed with `err`: 127 not found, else 126.
CORDON_API int exec_failure_status(int err) noexcept;

/// execve(path, argv, envp), tried again while it fails with ETXTBSY, for up to two seconds in
/// all: a process forked while the program's writer had it open holds a copy of the writer's
/// descriptor for a moment. Returns only on failure, with the last errno. Async-signal-safe,
/// no allocation: for a child between fork (or clone) and execve.
CORDON_API int execve_patiently(const char* path, char* const argv[], char* const envp[]) noexcept;

/// Every signal back to its default action and none blocked, for a child between fork (or
/// clone) and execve: an ignored signal survives execve, and a caught one would run the
/// parent's handler. Async-signal-safe, no allocation. Only the signals ignored or caught
/// (/proc/self/status) are reset; all of them when that file cannot be read.
CORDON_API void default_signals() noexcept;

/// The spec of `plan` for a child on this host: argv searched in the granted PATH (or
/// kDefaultSearchPath), exactly the granted environment with HOME = `home`, the workspace as
/// the working directory, the policy's rlimits (no core files; open files, CPU seconds, file
/// size), stdin, deadline and stop token. `guard` is set when the guard works here.
CORDON_API ChildSpec child_spec(const Plan& plan, const std::filesystem::path& home);

/// The rlimits the policy's limits ask for (always RLIMIT_CORE = 0).
CORDON_API std::vector<std::pair<int, rlim_t>> policy_rlimits(const Limits& limits);

/// Runs `spec`, streaming output to `sink` as it arrives. When this returns, no process of the
/// command is alive. Never throws.
CORDON_API ChildOutcome run_child(const ChildSpec& spec, OutputSink& sink);

/// The RunResult of `outcome` for `plan`: exit code or signal, timed_out, CPU times, a note for
/// a stop and for descendants killed after the command exited; exec failures as
/// exec_failure(); a failure before exec as CRD1003 (the command did not run); a fault of the
/// supervisor as CRD5003.
CORDON_API RunResult child_result(const ChildOutcome& outcome, const Plan& plan);

/// True when everything the deadline relies on works here — a child subreaper that can list its
/// children through /proc — tested in a throwaway child process.
CORDON_API bool child_supervision_supported(std::string& evidence);

/// True when the guard (ChildSpec::guard) can be installed here: probed once per process.
CORDON_API bool child_guard_supported();

/// Why this process cannot wait for the children a run starts, if it cannot: with SIGCHLD
/// ignored (SIG_IGN, which an execve() keeps) or handled with SA_NOCLDWAIT, the kernel reaps
/// them as they end and their exit status is lost. A backend that starts local children refuses
/// the run with this error (CRD1002: nothing was started) rather than report a status it never
/// saw. run_child() checks it itself (ChildStage::unwaitable, which child_result() turns into
/// this error). The `cordon` executables restore SIGCHLD's default action at start; a program
/// that embeds cordon keeps its own.
CORDON_API std::optional<Error> children_not_waitable();

}  // namespace cordon::sdk
