// The run path, on Linux, through a stand-in for sandbox-exec that records what it was given and
// runs the command without any sandbox: what is checked here is the plumbing around the
// launcher (the profile and its parameters handed over, the granted environment with a private
// HOME and TMPDIR, the exit status, both streams, the deadline), never Seatbelt itself.
#include <unistd.h>
#include <cordon/policy_loader.hpp>
#include <cordon/sdk/requirements.hpp>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "backend_test_util.hpp"
#include "seatbelt_backend.hpp"

using namespace cordon;
using namespace cordon::seatbelt;
namespace fs = std::filesystem;

namespace {

struct StandIn {
  fs::path dir = fs::temp_directory_path() / ("cordon-sbx-" + std::to_string(::getpid()));
  fs::path launcher = dir / "sandbox-exec";
  fs::path args = dir / "args";
  StandIn() {
    fs::create_directories(dir);
    std::ofstream(launcher) << "#!/bin/sh\nprintf '%s\\n' \"$@\" > '" << args.string()
                            << "'\nwhile [ \"$1\" != -- ]; do shift; done\nshift\nexec \"$@\"\n";
    fs::permissions(launcher, fs::perms::owner_all);
  }
  ~StandIn() { fs::remove_all(dir); }
  std::string given() const {
    std::ifstream in(args);
    return {std::istreambuf_iterator<char>(in), {}};
  }
};

Plan plan_for(std::vector<std::string> argv,
              std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  Policy p = load_preset("standard");
  p.limits.timeout = timeout;
  p = resolve_paths(std::move(p), PathContext{"/tmp", "/root"});
  Plan plan;
  plan.policy = p;
  plan.requirements = derive_requirements(p);
  plan.argv = std::move(argv);
  plan.workspace = "/tmp";
  plan.env = {{"PATH", "/usr/bin:/bin"}, {"LANG", "C.UTF-8"}};
  plan.deadline = std::chrono::steady_clock::now() + timeout;
  return plan;
}

}  // namespace

TEST_CASE(
    "seatbelt run: the launcher gets the profile and its parameters, the command runs "
    "with the granted environment",
    "[seatbelt]") {
  StandIn s;
  cordon::testing::CaptureSink sink;
  auto r = run_sandboxed(plan_for({"sh", "-c", "env | sort; echo oops >&2; exit 3"}), sink,
                         s.launcher.string());
  INFO(sink.err);
  REQUIRE_FALSE(r.error);
  CHECK(r.exit_code == 3);
  CHECK(sink.err == "oops\n");
  CHECK(sink.out.find("LANG=C.UTF-8\n") != std::string::npos);
  CHECK(sink.out.find("HOME=") != std::string::npos);
  CHECK(sink.out.find("TMPDIR=") != std::string::npos);
  CHECK(sink.out.find("USER=") == std::string::npos);  // nothing inherited
  std::string given = s.given();
  CHECK(given.rfind("-p\n(version 1)\n(deny default)\n", 0) == 0);
  CHECK(given.find("\n-DREAD_0=/usr\n") != std::string::npos);
  CHECK(given.find("\n--\nsh\n-c\n") != std::string::npos);
}

TEST_CASE("seatbelt run: the deadline ends the command", "[seatbelt]") {
  StandIn s;
  cordon::testing::CaptureSink sink;
  auto start = std::chrono::steady_clock::now();
  auto r = run_sandboxed(plan_for({"sleep", "30"}, std::chrono::milliseconds(500)), sink,
                         s.launcher.string());
  CHECK(r.timed_out);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
}
