// Helpers of the docker backend's tests: temporary directories, plans filled by hand, a
// capturing sink, the one backend object of the test process, and the daemon's prerequisites.
//
// CORDON_TEST_DOCKER_SOCKET  the daemon's socket (default: DOCKER_HOST, then the default one)
// CORDON_TEST_IMAGE          the image (default cordon-test/busybox:2, made by
// scripts/docker-image)
#pragma once

#include <pwd.h>

#include <cordon/sdk/backend.hpp>
#include <cordon/sdk/requirements.hpp>

#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backend_test_util.hpp"
#include "docker_backend.hpp"

namespace cordon::docker::test {

/// A directory under /var/tmp, removed with everything in it; owned by 65534 when the tests run
/// as root, so that the container's user (the workspace's owner) can write it.
class TempDir : public cordon::testing::TempDir {
 public:
  explicit TempDir(const std::string& prefix = "cordon-dk-")
      : cordon::testing::TempDir(prefix, 65534, "/var/tmp") {}
};

/// A directory under /var/tmp of the tests' own user, as cordon's state directory must be.
class OwnDir : public cordon::testing::TempDir {
 public:
  OwnDir() : cordon::testing::TempDir("cordon-dk-own-", ::geteuid(), "/var/tmp") {}
};

// The run's sink and file helpers shared by every backend's tests.
using cordon::testing::CaptureSink;
using cordon::testing::CueSink;
using cordon::testing::read_file;
using cordon::testing::write_file;

/// The test image's name.
std::string test_image();

/// The tests' daemon: CORDON_TEST_DOCKER_SOCKET, else the default endpoint.
Endpoint test_endpoint();

/// The docker CLI against the tests' daemon with `args` (a shell word list); its exit status.
int docker_cli(const std::string& args);
/// The settings table the tests run with: the image and, when given, the socket.
boost::json::object test_settings();

/// A policy with writes to `workspace`, a 60 s timeout.
Policy base_policy(const std::string& workspace);

/// A plan for argv in `workspace` with requirements derived from `policy`.
Plan make_plan(const Policy& policy, const std::string& workspace, std::vector<std::string> argv);

/// The backend of this test process (probed once).
DockerBackend& backend();

/// A new backend whose own probe asked the (fake) daemon listening on `socket`, given as
/// DOCKER_HOST for the probe alone: a run then passes the probe every run passes first without
/// any real daemon. Fails the test when that daemon is not usable.
std::unique_ptr<DockerBackend> backend_probed_at(const std::string& socket);

/// False (with a WARN) when the daemon or the image is missing; under CI=true, a failure.
bool docker_ready();

/// Runs `script` with /bin/sh -c.
RunResult run_sh(const Policy& policy, const std::string& workspace, const std::string& script,
                 CaptureSink& sink);

/// A policy file in `dir` for the CLI tests: the standard preset without `su` among the blocked
/// commands. The test image's every program is its busybox, which provides su as an applet, and
/// a multi-call program that provides a blocked applet is masked (nothing would run).
std::string cli_policy(const cordon::testing::TempDir& dir);

/// A configuration file in `dir` for the CLI tests: the docker backend with the test image,
/// and the test daemon's socket when CORDON_TEST_DOCKER_SOCKET names one.
std::string cli_config(const cordon::testing::TempDir& dir);

/// The mechanism the run reported for `capability`, or "".
std::string reported(const cordon::RunResult& r, std::string_view capability);

/// Ids of the containers labelled as made by this process.
std::vector<std::string> our_containers();

/// Ids of the containers labelled as made by process `pid`; only the running ones if asked.
std::vector<std::string> containers_made_by(pid_t pid, bool running_only);

/// An unprivileged local user who attacks cordon (CORDON_TEST_USER, default cordon-test).
struct Attacker {
  uid_t uid = 0;
  gid_t gid = 0;
};

/// The attacker when the tests run as root and the user exists; else nullopt with a WARN (a
/// failure under CI=true).
std::optional<Attacker> attacker();

/// The attacker's account (CORDON_TEST_USER, default cordon-test) when the tests run as root and
/// it has a home; else nullopt with a WARN (a failure under CI=true). For the tests of the
/// command user's own state.
std::optional<passwd> user_with_home();

/// Makes `user`'s cordon state directories as their first run would (~/.config/cordon,
/// ~/.local/state/cordon, ~/.cache/cordon and the levels above), owned by them: a missing one
/// inside a writable mount refuses the run.
void make_their_state(const passwd& user);

/// Runs `fn` in a child process as `who` (no supplementary groups) and returns its exit status
/// (fn's return value; 128+n when killed by signal n).
int as_attacker(const Attacker& who, const std::function<int()>& fn);

/// A process of the attacker's running `fn` in a loop until this object goes away (then killed
/// and reaped). For races: each call of `fn` is one try.
class AttackerLoop {
 public:
  AttackerLoop(const Attacker& who, std::function<void()> fn);
  ~AttackerLoop();
  AttackerLoop(const AttackerLoop&) = delete;
  AttackerLoop& operator=(const AttackerLoop&) = delete;

 private:
  pid_t pid_ = -1;
};

}  // namespace cordon::docker::test
