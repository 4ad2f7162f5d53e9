// The attacker of the job-state tests: the test user (scripts/test-user makes it), against a
// cordon that runs as root.
#pragma once

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"

namespace itest {

inline std::string test_user() {
  const char* u = std::getenv("CORDON_TEST_USER");
  return u && *u ? u : "cordon-test";
}

// Root, and an unprivileged user to attack with: else fail under CI=true, or skip saying why.
inline std::optional<passwd> attacker() {
  std::string why;
  passwd* pw = ::getpwnam(test_user().c_str());
  if (::geteuid() != 0)
    why = "needs root: the attacker is another user and cordon runs as root";
  else if (!pw)
    why = "user '" + test_user() + "' does not exist (scripts/test-user makes it)";
  if (why.empty()) return *pw;
  if (in_ci()) FAIL(why << " (CI=true)");
  WARN("skipped: " << why);
  return std::nullopt;
}

// Runs `argv` as the test user (through runuser), from "/".
inline escape::Exit as_user(std::vector<std::string> argv) {
  escape::SpawnOptions o;
  o.argv = {"/usr/sbin/runuser", "-u", test_user(), "--"};
  o.argv.insert(o.argv.end(), argv.begin(), argv.end());
  return escape::run_process(o);
}

}  // namespace itest
