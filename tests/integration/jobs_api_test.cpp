// Background jobs through the C++ API: what a host that embeds cordon relies on at shutdown.
#include <signal.h>
#include <cordon/jobs.hpp>
#include <cordon/policy_loader.hpp>

#include <chrono>
#include <fstream>
#include <thread>

#include "cli.hpp"

using namespace std::chrono_literals;

namespace {

bool wait_for_output(const cordon::JobManager& m, const std::string& id,
                     const std::string& needle) {
  for (int i = 0; i < 100; ++i) {
    if (m.output(id).find(needle) != std::string::npos) return true;
    std::this_thread::sleep_for(100ms);
  }
  return false;
}

}  // namespace

TEST_CASE("jobs: JobManager::stop_all stops every job it started, side by side", "[jobs][api]") {
  itest::Scratch s;
  auto workspace = s / "ws";
  std::filesystem::create_directories(workspace);
  std::string policy = (s / "policy.toml").string();
  std::ofstream(policy) << "version = 1\n[policy]\nname = \"stop-all\"\n";
  if (!itest::landlock_usable(policy)) return;
  cordon::JobManagerOptions options;
  options.state_dir = s / "state";
  options.cordon_exe = CORDON_CLI;
  cordon::JobManager manager(options), other_manager(options);
  cordon::JobSpec spec;
  spec.workspace = workspace;
  spec.policy =
      cordon::resolve_paths(cordon::load_policy_file(policy), {workspace, "/nonexistent-home"});
  spec.backend = "landlock";
  auto marker = escape::unique_marker("cordon-stop-all");
  spec.argv = {"sh", "-c", "trap '' TERM; echo up; while :; do sleep 1; done; : " + marker};
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) ids.push_back(manager.start(spec).id);
  // A job another manager started is not this manager's to stop.
  spec.argv = {"sh", "-c", "echo up; sleep 1000"};
  auto other = other_manager.start(spec).id;
  for (const auto& id : ids) REQUIRE(wait_for_output(manager, id, "up"));
  REQUIRE(wait_for_output(manager, other, "up"));
  CHECK_FALSE(escape::pids_with_marker(marker).empty());

  auto begin = std::chrono::steady_clock::now();
  manager.stop_all(1s);
  auto took = std::chrono::steady_clock::now() - begin;
  for (const auto& id : ids) {
    auto info = manager.status(id);
    CHECK(std::string(cordon::to_string(info.status)) == "stopped");
    REQUIRE(info.result);
    CHECK(info.result->signal == SIGKILL);
  }
  CHECK(took < 3s);  // three graces of 1 s ran at once, not one after another
  CHECK(escape::pids_with_marker(marker).empty());
  CHECK(other_manager.status(other).status == cordon::JobStatus::running);
  other_manager.stop_all(1s);
  CHECK(other_manager.status(other).status == cordon::JobStatus::stopped);
}

TEST_CASE("jobs: JobSpec::timeout may only shorten limits.job_lifetime", "[jobs][api]") {
  itest::Scratch s;
  auto workspace = s / "ws";
  std::filesystem::create_directories(workspace);
  std::string policy = (s / "policy.toml").string();
  std::ofstream(policy) << "version = 1\n[policy]\nname = \"lifetime\"\n[limits]\n"
                        << "job_lifetime = \"10s\"\n";
  cordon::JobManagerOptions options;
  options.state_dir = s / "state";
  options.cordon_exe = CORDON_CLI;
  cordon::JobManager manager(options);
  cordon::JobSpec spec;
  spec.workspace = workspace;
  spec.policy =
      cordon::resolve_paths(cordon::load_policy_file(policy), {workspace, "/nonexistent-home"});
  spec.argv = {"true"};
  spec.timeout = 11s;
  try {
    manager.start(spec);
    FAIL("a timeout longer than limits.job_lifetime was accepted");
  } catch (const cordon::Error& e) {
    CHECK(e.code() == "CRD4006");
    CHECK(std::string(e.message()).find("limits.job_lifetime (10s)") != std::string::npos);
  }
  CHECK(manager.list(true).empty());
}
