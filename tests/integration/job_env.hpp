// A scratch job environment for the integration tests of `cordon job`.
#pragma once

#include <boost/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cli.hpp"

namespace itest {

// A job environment: a state dir, a workspace and a policy file without cgroup limits, so the
// same test runs for any user.
struct JobEnv {
  Scratch scratch;
  std::string state, workspace, policy;
  explicit JobEnv(const std::string& extra = "") {
    state = (scratch / "state").string();
    workspace = (scratch / "ws").string();
    std::filesystem::create_directories(workspace);
    policy = (scratch / "policy.toml").string();
    std::ofstream(policy) << "version = 1\n[policy]\nname = \"jobs-test\"\n" << extra;
  }
  // A test that failed half-way must not leave its jobs running.
  ~JobEnv() {
    auto list = run_cli({"job", "list", "--state-dir", state, "--json"});
    boost::json::error_code ec;
    auto jobs = boost::json::parse(list.out, ec);
    if (ec || !jobs.is_array()) return;
    for (const auto& j : jobs.as_array())
      if (j.is_object() && j.as_object().contains("id"))
        run_cli({"job", "stop", std::string(j.at("id").as_string()), "--grace", "100ms",
                 "--state-dir", state});
  }
  JobEnv(const JobEnv&) = delete;
  JobEnv& operator=(const JobEnv&) = delete;
  std::vector<std::string> with(std::vector<std::string> a) const {
    a.insert(a.begin() + 2, {"--state-dir", state});
    return a;
  }
  std::string start(const std::vector<std::string>& argv, const std::string& extra_opt = "") {
    std::vector<std::string> args = {"job",      "start", "--state-dir", state,
                                     "--policy", policy,  "--workspace", workspace};
    if (!extra_opt.empty()) args.push_back(extra_opt);
    args.push_back("--");
    args.insert(args.end(), argv.begin(), argv.end());
    auto r = run_cli(args);
    INFO(r.err);
    REQUIRE(r.status == 0);
    std::string id = r.out.substr(0, r.out.find('\n'));
    REQUIRE(id.size() == 25);
    return id;
  }
  boost::json::object status(const std::string& id) {
    auto r = run_cli({"job", "status", id, "--state-dir", state, "--json"});
    INFO(r.err);
    REQUIRE(r.status == 0);
    return boost::json::parse(r.out).as_object();
  }
};

inline bool wait_for_output(JobEnv& env, const std::string& id, const std::string& needle,
                            std::chrono::seconds limit) {
  auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    auto r = run_cli({"job", "output", id, "--state-dir", env.state});
    if (r.out.find(needle) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

}  // namespace itest
