// Helpers of the e2b backend's tests: the local stand-in (mock-fixture), settings and plans for
// it, its test hooks (state, faults), and the CLI.
#pragma once

#include <cordon/sdk/backend.hpp>
#include <cordon/sdk/requirements.hpp>

#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "backend_test_util.hpp"
#include "e2b_backend.hpp"

namespace cordon::e2b::test {

using cordon::testing::CaptureSink;
using cordon::testing::CueSink;

/// True when the stand-in runs (its key is then in CORDON_E2B_TEST_KEY); otherwise says why (a
/// failure under CI=true) and is false.
bool ready();
/// http://127.0.0.1:PORT of the stand-in.
std::string url();
/// The stand-in's API key.
std::string key();

/// Settings for the stand-in, with `extra` keys added.
boost::json::object settings(const boost::json::object& extra = {});

/// A policy with the network denied, writes to the workspace, a timeout.
Policy basic_policy(std::chrono::milliseconds timeout = std::chrono::seconds(60));

/// A plan for `argv` in `workspace` (default: a fresh directory the caller keeps).
Plan make_plan(const Policy& policy, std::vector<std::string> argv, const std::string& workspace,
               const boost::json::object& extra_settings = {});

/// A backend of its own (its pool dies with it).
std::unique_ptr<E2bBackend> make_backend();

/// GET /_mock/state.
boost::json::object state();
/// The ids of the sandboxes alive in the stand-in.
std::vector<std::string> alive_sandboxes();
/// Processes alive in every sandbox together.
long processes_alive();
/// POST /_mock/faults (an empty object clears them).
void set_faults(const boost::json::object& faults);
/// POST /_mock/reset: no sandbox, no fault, an empty request log.
void reset();
/// True once no sandbox is left, within `limit`.
bool no_sandbox_within(std::chrono::milliseconds limit);

/// The code ("CRD1005") of a result's error, or "" when it has none.
std::string code_of(const RunResult& r);

/// A config file for the CLI naming the stand-in, in `dir`; returns its path.
std::string write_config(const std::string& dir, const std::string& extra = "");
/// A policy file the backend can prove (no memory, process or exec limits), in `dir`.
std::string write_policy(const std::string& dir);

/// Runs the CLI with `args` (and the test key in its environment); its output and status.
struct Cli {
  int status = -1;
  std::string out, err;
};
Cli cli(const std::vector<std::string>& args);

}  // namespace cordon::e2b::test
