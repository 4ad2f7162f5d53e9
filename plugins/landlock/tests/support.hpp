// Helpers of the landlock backend's tests: temporary directories, plans filled by hand, a
// capturing sink, and the one backend object of the test process.
#pragma once

#include <cordon/sdk/backend.hpp>
#include <cordon/sdk/requirements.hpp>

#include <catch2/catch.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backend_test_util.hpp"
#include "landlock_backend.hpp"

namespace cordon::landlock::test {

/// A directory under `base` (/tmp by default), removed with everything in it. Host-side areas a
/// test expects to see with read = "host" live in /var/tmp: the sandbox's /tmp is private. As root
/// it belongs to `owner` (default 65534), so that the sandbox's identity can write it.
class TempDir : public cordon::testing::TempDir {
 public:
  explicit TempDir(const std::string& prefix = "cordon-ll-", uid_t owner = 65534,
                   const std::string& base = "/tmp")
      : cordon::testing::TempDir(prefix, owner, base) {}
};

/// A TempDir in /var/tmp.
inline std::string host_area() { return "/var/tmp"; }

// The run's sink and file helpers shared by every backend's tests.
using cordon::testing::CaptureSink;
using cordon::testing::read_file;
using cordon::testing::write_file;

/// The default policy with paths expanded for `workspace` and `home`.
Policy base_policy(const std::string& workspace, const std::string& home);

/// A plan for argv in `workspace`, requirements derived from `policy`.
Plan make_plan(const Policy& policy, const std::string& workspace, std::vector<std::string> argv,
               const std::string& home = "/nonexistent-home");

/// The backend of this test process (probed once).
LandlockBackend& backend();

/// False (with a WARN saying why) when the backend is unavailable here; under CI=true a
/// missing prerequisite fails the test instead.
bool sandbox_available();

/// True when cordon runs as root.
bool is_root();

/// False (with a WARN) when `ok` is false: a prerequisite of this host is missing. Under
/// CI=true the test fails instead.
bool needs(bool ok, const std::string& why);

/// True when the backend proves `capability` here. Otherwise it says why (WARN), and the test
/// asserts the refusal instead (check_refused). Under CI=true a capability every host of the
/// suite must offer (`ci_requires`) fails the test instead, unless a test knob
/// (CORDON_LANDLOCK_MAX_ABI, CORDON_CGROUPS) took it away.
bool proven_here(std::string_view capability, bool ci_requires = false);

/// True when a test knob reduces the backend (reductions.hpp).
bool reduced();

/// False (with a WARN) unless the tests run as root; the test is for root's case only.
bool needs_root();

/// Runs `script` with /bin/sh -c in a plan made from `policy`; output in `sink`.
RunResult run_sh(const Policy& policy, const std::string& workspace, const std::string& script,
                 CaptureSink& sink, const std::string& home = "/nonexistent-home");

/// How a program ended when run directly on the host, outside any sandbox.
struct HostOutcome {
  int exit_code = -1;  ///< -1 when it was killed (or could not be run)
  int signal = 0;      ///< the signal that killed it, or 0
  std::string out;     ///< its stdout
  std::string describe() const;
};

/// Runs `argv` on the host, as the tests' own user, and waits for it.
HostOutcome run_on_host(const std::vector<std::string>& argv);

/// The probe tool built with the tests, and the directory it is in.
std::string probe_tool();
std::string probe_tool_dir();

/// base_policy() for `ws` with the probe tool's directory readable.
Policy with_tool(const TempDir& ws);

/// Checks that a run of `policy` is refused with CRD1001 naming `capability`, and that nothing
/// ran; the same run without the clause that needs it (`without`) works.
void check_refused(const Policy& policy, const Policy& without, const TempDir& ws,
                   std::string_view capability);

/// Sets (or, with nullptr, unsets) an environment variable while alive; restores it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

}  // namespace cordon::landlock::test
