// Running the real `cordon` CLI from integration tests, and scratch directories.
#pragma once

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "process.hpp"

namespace itest {

/// Runs `cordon ARGS...` (optionally with extra environment) and returns how it ended.
inline escape::Exit run_cli(std::vector<std::string> args,
                            std::map<std::string, std::string> env = {}) {
  escape::SpawnOptions o;
  o.argv = {CORDON_CLI};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.set_env = std::move(env);
  return escape::run_process(o);
}

/// A temporary directory, removed at the end of the test.
struct Scratch {
  std::filesystem::path dir;
  Scratch() {
    char tmpl[] = "/tmp/cordon-itest-XXXXXX";
    dir = ::mkdtemp(tmpl);
    // Run as root, a sandbox maps to an unprivileged uid that must reach the workspace.
    std::filesystem::permissions(
        dir, std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                 std::filesystem::perms::group_exec | std::filesystem::perms::others_read |
                 std::filesystem::perms::others_exec);
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  std::filesystem::path operator/(const std::string& p) const { return dir / p; }
};

/// True when CI=true: a missing prerequisite then fails instead of skipping.
inline bool in_ci() {
  const char* ci = std::getenv("CI");
  return ci && std::string(ci) == "true";
}

/// Whether `cordon run --backend landlock` works here (with `policy`); when not, fails in CI
/// or warns and returns false locally.
bool landlock_usable(const std::string& policy_file);

/// The whole of the file at `p` (empty when it cannot be read).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace itest
