// The other names (hard links) of blocked files (blocked_links.hpp), on Linux with links made in
// a temporary directory, and what the profile then decides for them, both ways: without the
// lookup a hard link of a blocked file is readable, with it it is not; a name where the command
// may write, or one that cannot be found, refuses the run.
#include <unistd.h>
#include <cordon/policy_loader.hpp>
#include <cordon/sdk/error.hpp>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>

#include "backend_test_util.hpp"
#include "blocked_links.hpp"
#include "sbpl.hpp"
#include "seatbelt_backend.hpp"

using namespace cordon;
using namespace cordon::seatbelt;
namespace fs = std::filesystem;

namespace {

// A blocked file `secret` with a hard link beside it, a write grant `work`, and `elsewhere`.
struct LinkedSecret {
  fs::path root = fs::temp_directory_path() / ("cordon-sbhard-" + std::to_string(::getpid()));
  fs::path secret = root / "keys" / "secret", beside = root / "keys" / "secret-copy";
  fs::path work = root / "work", elsewhere = root / "elsewhere";
  LinkedSecret() {
    fs::remove_all(root);
    fs::create_directories(secret.parent_path());
    fs::create_directories(work);
    fs::create_directories(elsewhere);
    std::ofstream(secret) << "key\n";
    fs::create_hard_link(secret, beside);
  }
  ~LinkedSecret() { fs::remove_all(root); }

  ProfileInput input() const {
    ProfileInput in;
    in.policy = resolve_paths(load_preset("standard"), PathContext{work.string(), "/root"});
    in.policy.filesystem.read_host = true;
    in.policy.filesystem.write = {work.string()};
    in.policy.filesystem.blocked = {secret.string()};
    in.workspace = work;
    in.home = root / "run" / "home";
    in.tmp = root / "run" / "tmp";
    return in;
  }
};

bool read_allowed(const ProfileInput& in, const fs::path& path) {
  Profile p = generate_profile(in);
  std::map<std::string, std::string> params(p.params.begin(), p.params.end());
  auto parsed = test::parse_sbpl(p.text);
  REQUIRE(test::check_profile(parsed, params).empty());
  return test::evaluate(parsed, params, "file-read-data", macos_path(path.string())) ==
         test::Verdict::allow;
}

std::string refusal(ProfileInput& in, const std::vector<std::string>& writable) {
  try {
    add_blocked_links(in, writable);
  } catch (const Error& e) {
    return e.code() + ": " + e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("seatbelt blocked links: a blocked file's hard link is blocked with it", "[seatbelt]") {
  LinkedSecret s;
  ProfileInput in = s.input();
  CHECK_FALSE(read_allowed(in, s.secret));
  CHECK(read_allowed(in, s.beside));  // without the lookup: Seatbelt matches paths
  auto notes = add_blocked_links(in, {s.work.string()});
  CHECK(notes.empty());
  CHECK(in.policy.filesystem.blocked ==
        std::vector<std::string>{s.secret.string(), s.beside.string()});
  CHECK_FALSE(read_allowed(in, s.secret));
  CHECK_FALSE(read_allowed(in, s.beside));
  CHECK(read_allowed(in, s.elsewhere / "other"));  // the rest stays readable
}

TEST_CASE("seatbelt blocked links: a file with one name adds nothing", "[seatbelt]") {
  LinkedSecret s;
  fs::remove(s.beside);
  ProfileInput in = s.input();
  add_blocked_links(in, {s.work.string()});
  CHECK(in.policy.filesystem.blocked == std::vector<std::string>{s.secret.string()});
}

TEST_CASE(
    "seatbelt blocked links: a hard link where the command may write, or one that is not found, "
    "refuses the run",
    "[seatbelt]") {
  LinkedSecret s;
  SECTION("in the write grant") {
    fs::create_hard_link(s.secret, s.work / "planted");
    ProfileInput in = s.input();
    std::string why = refusal(in, {s.work.string()});
    CHECK(why.rfind("CRD1007: ", 0) == 0);
    CHECK(why.find("planted") != std::string::npos);
  }
  SECTION("elsewhere, so that the link count is not made up") {
    fs::create_hard_link(s.secret, s.elsewhere / "hidden");
    ProfileInput in = s.input();
    std::string why = refusal(in, {s.work.string()});
    CHECK(why.rfind("CRD1007: ", 0) == 0);
  }
}

TEST_CASE("seatbelt blocked links: a run whose blocked file cannot be covered is refused",
          "[seatbelt]") {
  LinkedSecret s;
  fs::create_hard_link(s.secret, s.elsewhere / "hidden");
  Plan plan;
  plan.policy = s.input().policy;
  plan.argv = {"/bin/true"};
  plan.workspace = s.work;
  plan.env = {{"PATH", "/usr/bin:/bin"}};
  plan.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  cordon::testing::CaptureSink sink;
  // The launcher is never reached: the refusal comes first.
  RunResult r = run_sandboxed(plan, sink, "/nonexistent/sandbox-exec");
  REQUIRE(r.error);
  CHECK(r.error->code() == "CRD1007");
}
