// Running `cordon run` the way a user does, and reading what it reports: the exit status, the
// --json object, and the probe lines the sandboxed command printed.
#pragma once

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "backend_setup.hpp"
#include "policy_spec.hpp"
#include "process.hpp"
#include "scratch.hpp"

namespace escape {

/// The "error" member of cordon's --json output.
struct ErrorInfo {
  std::string code;
  std::string message;
  std::string hint;
};

/// cordon's --json object.
struct JsonResult {
  int exit_code = -1;
  int signal = 0;
  bool timed_out = false;
  std::string out;
  std::string err;
  bool out_truncated = false;
  bool err_truncated = false;
  std::int64_t duration_ms = 0;
  std::string backend;
  std::vector<std::pair<std::string, std::string>> report;  ///< capability, mechanism
  std::vector<std::string> notes;
  std::optional<ErrorInfo> error;
};

/// How to invoke cordon beyond the policy and the command.
struct RunExtras {
  bool json = true;
  bool with_policy = true;                     ///< false: no --policy (the default preset)
  bool with_workspace = true;                  ///< --workspace <scratch>/ws
  std::optional<std::string> backend;          ///< default backend_name(); "" = no --backend
  std::vector<std::string> flags;              ///< more cordon flags, before "--"
  std::map<std::string, std::string> set_env;  ///< cordon's own environment
  std::vector<std::string> unset_env;
  std::vector<int> inherit_fds;  ///< host descriptors cordon inherits
  std::chrono::milliseconds deadline{180000};
};

/// One finished cordon invocation.
struct Ran {
  Exit proc;                       ///< cordon's own exit, output and peak RSS
  std::optional<JsonResult> json;  ///< parsed --json output
  std::string json_problem;        ///< why --json output could not be parsed

  /// What the command wrote to stdout: the JSON "stdout" member, or cordon's stdout.
  std::string out() const;
  /// The text after "<tag>: " on the first probe line with that tag, or "<no line 'tag'>".
  std::string line(const std::string& tag) const;
  /// Every probe line with the tag, in order.
  std::vector<std::string> lines(const std::string& tag) const;
  /// The command's exit status as reported (JSON exit_code when present, else cordon's status).
  int status() const;
  /// The error code cordon reported (JSON error.code, else a CRDnnnn found on stderr).
  std::string error_code() const;
  /// Everything about the run, for INFO() on failure.
  std::string describe() const;
};

/// The argv of a cordon invocation, with the backend's own flags (backend_flags()) and the
/// probes named where the sandbox finds them (sandbox_command()).
std::vector<std::string> cordon_argv(const Scratch& scratch, const std::string& policy_path,
                                     const std::vector<std::string>& command,
                                     const RunExtras& extras);

/// Writes the policy, runs `cordon run ... -- command` and waits for it.
Ran run_cordon(Scratch& scratch, const PolicySpec& policy, const std::vector<std::string>& command,
               const RunExtras& extras = {});

/// Runs probe `name` with `args` under `policy` and requires that the sandbox ran it.
Ran run_probe(Scratch& scratch, const PolicySpec& policy, const std::string& name,
              const std::vector<std::string>& args, const RunExtras& extras = {});

/// Whether the backend under test would run `policy` (nullptr: the default preset) here, as
/// `cordon explain` says with the settings a run in `scratch` gets: it proves every requirement.
/// When not, a WARN names what it does not prove, and the test asserts the refusal instead.
bool backend_would_run(Scratch& scratch, const PolicySpec* policy);

/// The lines of `cordon explain --json`'s "preview" for `policy` in `scratch` (what the backend
/// would decide before a run: the command's identity, where each `~` path lands).
std::vector<std::string> explain_preview(Scratch& scratch, const PolicySpec& policy);

/// Seconds to add to a short timeout so that a command still starts well within it on a slower
/// machine: 0 where the backend under test starts one in under 100 ms, else 4 times what that
/// takes here (machines of one kind differ up to 4x; docker's create and start take ~0.6 s on a
/// fast one). Measured once per process.
int start_allowance();

/// `seconds` plus start_allowance(), as a [limits] timeout ("3s").
std::string short_timeout(int seconds);

/// Runs probe `name` with `args` directly on the host, as the suite's own user.
Ran run_on_host(const std::string& name, const std::vector<std::string>& args);

/// Wraps a finished process as a Ran, parsing its --json output when `json`.
Ran make_ran(Exit proc, bool json);

/// Parses cordon's --json object; throws std::runtime_error with the reason.
JsonResult parse_json_result(const std::string& text);

/// Asserts that the sandbox really ran the command: no cordon error, the backend under test.
void require_ran(const Ran& ran);

/// Whether CI=true (a missing prerequisite then fails instead of skipping).
bool in_ci();

/// Matches a probe line that reports success ("OK ...").
class IsOk : public Catch::MatcherBase<std::string> {
 public:
  bool match(const std::string& line) const override;
  std::string describe() const override;
};

/// Matches a probe line that reports a failure with one of the given errno names.
class IsErr : public Catch::MatcherBase<std::string> {
 public:
  explicit IsErr(std::set<std::string> names) : names_(std::move(names)) {}
  bool match(const std::string& line) const override;
  std::string describe() const override;

 private:
  std::set<std::string> names_;
};

/// A denied read: Landlock answers EACCES; a path the sandbox's mount namespace hides, ENOENT.
inline const std::set<std::string> kReadDenied{"EACCES", "ENOENT"};
/// A denied write to a path the sandbox can see: Landlock EACCES, a read-only mount EROFS.
inline const std::set<std::string> kWriteDenied{"EACCES", "EROFS"};
/// A denied write to a path the sandbox may not even see.
inline const std::set<std::string> kHiddenWriteDenied{"EACCES", "EROFS", "ENOENT"};
/// A denied link or rename: as a write, or Landlock's EXDEV for a reparenting it refuses.
inline const std::set<std::string> kLinkDenied{"EACCES", "EROFS", "ENOENT", "EXDEV", "EPERM"};
/// A denied metadata change (chmod, utimes): not the owner (EPERM), or a read-only mount.
inline const std::set<std::string> kMetadataDenied{"EPERM", "EROFS", "EACCES"};
/// A host process out of reach: not in the pid namespace (ESRCH), or a scoped signal (EPERM).
inline const std::set<std::string> kHostProcessDenied{"ESRCH", "EPERM"};

}  // namespace escape

/// Skips the rest of a test (with a warning) when the environment lacks something; under
/// CI=true the test fails instead, as a missing prerequisite there is a defect.
#define ESCAPE_REQUIRE_ENV(cond, why)   \
  do {                                  \
    if (!(cond)) {                      \
      if (::escape::in_ci()) FAIL(why); \
      WARN("skipped: " << why);         \
      return;                           \
    }                                   \
  } while (0)
