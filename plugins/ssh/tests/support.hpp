// Helpers of the ssh backend's tests: the sshd fixture (scripts/sshd), settings and plans for
// it, and one backend object per test process (its connections and proofs are pooled).
#pragma once

#include <cordon/sdk/backend.hpp>
#include <cordon/sdk/requirements.hpp>

#include <catch2/catch.hpp>

#include <boost/json/object.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "backend_test_util.hpp"
#include "ssh_backend.hpp"

namespace cordon::ssh::test {

using cordon::testing::CaptureSink;
using cordon::testing::CueSink;

/// The fixture's directory and its two ports. Skips the test (or fails it under CI=true) when
/// the fixture did not start.
struct Fixture {
  std::string dir;
  std::vector<int> ports;
  std::string user;
};
const Fixture& fixture();
/// True when the fixture runs; otherwise says why (a failure under CI=true) and is false.
bool ready();

/// Settings for host `n` (0 or 1) of the fixture, with its known-hosts file and client key.
boost::json::object settings(int n = 0);

/// A policy the plain-shell path can prove: host files, host network, host HOME, a timeout.
Policy shell_policy(std::chrono::milliseconds timeout = std::chrono::seconds(30));

/// A plan for `argv` on host `n`, working in /tmp on the remote side.
Plan make_plan(const Policy& policy, std::vector<std::string> argv, int n = 0);

/// A fresh directory under /tmp that the fixture's login owns (the remote host is this
/// machine), removed at the end.
struct RemoteWorkspace {
  std::filesystem::path dir;
  RemoteWorkspace();
  ~RemoteWorkspace();
  RemoteWorkspace(const RemoteWorkspace&) = delete;
  RemoteWorkspace& operator=(const RemoteWorkspace&) = delete;
  /// Writes `text` to `name` in it (mode 0644, owned by the login).
  void put(const std::string& name, const std::string& text) const;
};

/// The backend of this test process.
SshBackend& backend();

/// Lines of `pgrep -f PATTERN` (processes of this machine: the remote host is 127.0.0.1).
std::vector<std::string> processes_matching(const std::string& pattern);

/// A unique word for a test's remote processes, so pgrep finds only them.
std::string marker(const char* what);

/// True once no process matches `pattern` (pgrep -f), within `limit`.
bool gone_within(const std::string& pattern, std::chrono::milliseconds limit);

/// Starts `cordon run --backend ssh` on host 0 (its [backends.ssh] with `extra_config` lines
/// added, the policy `policy_toml`, in `workspace`) with a command that leaves a setsid() child
/// marked `marker`, waits until that child runs, and kills cordon with SIGKILL.
void kill_cordon_mid_run(const std::string& extra_config, const std::string& policy_toml,
                         const std::string& workspace, const std::string& marker);

/// The code ("CRD1008") of a result's error, or "" when it has none.
std::string code_of(const RunResult& r);

}  // namespace cordon::ssh::test
