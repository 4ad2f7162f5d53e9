// The run path, on Linux, through a stand-in for sandbox-exec that records what it was given and
// runs the command without any sandbox: what is checked here is the plumbing around the
// launcher (the profile and its parameters handed over, the programs' symlinks resolved, the
// granted environment with a private HOME and TMPDIR, the exit status, both streams, the
// deadline), never Seatbelt itself.
#include <unistd.h>
#include <cordon/policy_loader.hpp>
#include <cordon/sdk/requirements.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

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
  fs::path profile = dir / "profile";  // a copy of the profile file it was given, and its mode
  StandIn() {
    fs::create_directories(dir);
    std::ofstream(launcher) << "#!/bin/sh\nprintf '%s\\n' \"$@\" > '" << args.string()
                            << "'\n[ \"$1\" = -f ] && cp \"$2\" '" << profile.string()
                            << "' && stat -c %a \"$2\" > '" << profile.string() << ".mode'"
                            << "\nwhile [ \"$1\" != -- ]; do shift; done\nshift\nexec \"$@\"\n";
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
  // The profile in a file of the run's own, for its owner alone, gone with the run.
  REQUIRE(given.rfind("-f\n", 0) == 0);
  std::string file = given.substr(3, given.find('\n', 3) - 3);
  CHECK(fs::path(file).filename() == "profile.sb");
  CHECK_FALSE(fs::exists(file));
  std::ifstream copy(s.profile), mode(s.profile.string() + ".mode");
  std::string text{std::istreambuf_iterator<char>(copy), {}}, bits;
  mode >> bits;
  CHECK(text.rfind("(version 1)\n(deny default)\n", 0) == 0);
  CHECK(bits == "600");
  CHECK(given.find("\n-DREAD_0=/usr\n") != std::string::npos);
  CHECK(given.find("\n--\nsh\n-c\n") != std::string::npos);
}

TEST_CASE("seatbelt run: HOME and TMPDIR are the run's own, for its user alone, and go with it",
          "[seatbelt]") {
  StandIn s;
  cordon::testing::CaptureSink sink;
  auto r = run_sandboxed(
      plan_for({"sh", "-c", "stat -c %a \"$HOME\" \"$TMPDIR\"; echo \"$HOME\" \"$TMPDIR\""}), sink,
      s.launcher.string());
  REQUIRE_FALSE(r.error);
  std::istringstream out(sink.out);
  std::string home_mode, tmp_mode, home, tmp;
  out >> home_mode >> tmp_mode >> home >> tmp;
  CHECK(home_mode == "700");
  CHECK(tmp_mode == "700");
  CHECK(home != "/root");
  CHECK(fs::path(home).parent_path() == fs::path(tmp).parent_path());
  CHECK_FALSE(fs::exists(home));  // removed with the run
  CHECK_FALSE(fs::exists(tmp));
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

TEST_CASE("seatbelt run: a blocked program's symlink target reaches the launcher, denied",
          "[seatbelt]") {
  StandIn s;
  fs::create_directories(s.dir / "bin");
  fs::create_directories(s.dir / "real");
  std::ofstream(s.dir / "real" / "fetch-real") << "#!/bin/sh\nexit 0\n";
  fs::permissions(s.dir / "real" / "fetch-real", fs::perms::owner_all);
  fs::create_symlink(s.dir / "real" / "fetch-real", s.dir / "bin" / "fetch");
  Plan plan = plan_for({"true"});
  plan.policy.process.blocked_commands.push_back("fetch");
  plan.env["PATH"] = (s.dir / "bin").string() + ":/usr/bin:/bin";
  cordon::testing::CaptureSink sink;
  auto r = run_sandboxed(plan, sink, s.launcher.string());
  REQUIRE_FALSE(r.error);
  // Each "-DNOEXEC_k=VALUE" the launcher was given, as the stand-in recorded it, one a line.
  std::vector<std::string> denied;
  std::istringstream given(s.given());
  for (std::string line; std::getline(given, line);)
    if (line.rfind("-DNOEXEC_", 0) == 0) denied.push_back(line.substr(line.find('=') + 1));
  auto has = [&](const std::string& v) {
    return std::find(denied.begin(), denied.end(), v) != denied.end();
  };
  CHECK(has(macos_path((s.dir / "bin" / "fetch").string())));
  CHECK(has(macos_path(fs::canonical(s.dir / "real" / "fetch-real").string())));  // by the link
}
