// The programs' symlinks resolved on the host (host_programs.hpp), on Linux with links made in a
// temporary PATH directory, and what the profile then decides for their targets, both ways: a
// blocked name's target is denied, an allowed name's target may run, and the targets of other
// names are left as they were.
#include <unistd.h>
#include <cordon/policy_loader.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "host_programs.hpp"
#include "profile.hpp"
#include "sbpl.hpp"
#include "seatbelt_backend.hpp"

using namespace cordon;
using namespace cordon::seatbelt;
namespace fs = std::filesystem;

namespace {

// A PATH directory `bin` whose programs are symlinks into `real`, as Homebrew's are:
// bin/curl -> ../real/curl-real (relative), bin/ok and bin/tool -> real/... (absolute), and
// bin/plain, a program that is no link.
struct LinkDir {
  fs::path root = fs::temp_directory_path() / ("cordon-sblinks-" + std::to_string(::getpid()));
  fs::path bin = root / "bin";
  fs::path real = root / "real";
  LinkDir() {
    fs::remove_all(root);
    fs::create_directories(bin);
    fs::create_directories(real);
    for (const char* name : {"curl-real", "ok-real", "tool-real"}) program(real / name);
    program(bin / "plain");
    fs::create_symlink("../real/curl-real", bin / "curl");
    fs::create_symlink(real / "ok-real", bin / "ok");
    fs::create_symlink(real / "tool-real", bin / "tool");
  }
  ~LinkDir() { fs::remove_all(root); }
  static void program(const fs::path& file) {
    std::ofstream(file) << "#!/bin/sh\nexit 0\n";
    fs::permissions(file, fs::perms::owner_all);
  }
  // A target as Seatbelt names it (on Linux /tmp is not /private/tmp, but the profile says so).
  std::string target(const std::string& name) const { return macos_path((real / name).string()); }
};

Plan plan_with_path(const LinkDir& d) {
  Plan plan;
  plan.policy = resolve_paths(load_preset("standard"), PathContext{"/tmp", "/root"});
  plan.workspace = "/tmp";
  plan.env = {{"PATH", d.bin.string() + ":/usr/bin:/bin"}};
  return plan;
}

// The profile of `in`, parsed, asked about one exec.
bool exec_allowed(const ProfileInput& in, const std::string& path) {
  Profile p = generate_profile(in);
  std::map<std::string, std::string> params(p.params.begin(), p.params.end());
  auto parsed = test::parse_sbpl(p.text);
  REQUIRE(test::check_profile(parsed, params).empty());
  return test::evaluate(parsed, params, "process-exec", path) == test::Verdict::allow;
}

// The profile of `in`, asked whether a file's content may be read.
bool data_readable(const ProfileInput& in, const std::string& path) {
  Profile p = generate_profile(in);
  std::map<std::string, std::string> params(p.params.begin(), p.params.end());
  return test::evaluate(test::parse_sbpl(p.text), params, "file-read-data", path) ==
         test::Verdict::allow;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

bool has_link(const std::vector<ProgramLink>& links, const fs::path& candidate, bool blocked) {
  return std::any_of(links.begin(), links.end(), [&](const ProgramLink& l) {
    return l.candidate == candidate.string() && l.blocked == blocked;
  });
}

}  // namespace

TEST_CASE(
    "seatbelt host programs: a blocked name reached through a symlink has its target denied, "
    "a name not blocked keeps its target allowed",
    "[seatbelt]") {
  LinkDir d;
  ProfileInput in = profile_input(plan_with_path(d), "/private/tmp/r");
  in.policy.process.blocked_commands.push_back("curl");
  // Without the host's links the target runs: the gap this closes.
  CHECK(exec_allowed(in, d.target("curl-real")));
  auto links = find_program_links(in);
  CHECK(has_link(links, d.bin / "curl", true));
  CHECK_FALSE(has_link(links, d.bin / "ok", true));
  CHECK_FALSE(has_link(links, d.bin / "plain", true));  // no link: the candidate is the file
  add_program_links(in, links);
  CHECK_FALSE(exec_allowed(in, d.target("curl-real")));
  CHECK_FALSE(exec_allowed(in, macos_path((d.bin / "curl").string())));
  CHECK(exec_allowed(in, d.target("ok-real")));
  CHECK(exec_allowed(in, macos_path((d.bin / "ok").string())));
}

TEST_CASE(
    "seatbelt host programs: an allowed name reached through a symlink may run its target, "
    "other programs may not, and a target that is also blocked stays denied",
    "[seatbelt]") {
  LinkDir d;
  ProfileInput in = profile_input(plan_with_path(d), "/private/tmp/r");
  in.policy.process.allowed_commands = {"tool"};
  CHECK_FALSE(exec_allowed(in, d.target("tool-real")));  // the allow-list would break
  auto links = find_program_links(in);
  CHECK(has_link(links, d.bin / "tool", false));
  add_program_links(in, links);
  CHECK(exec_allowed(in, d.target("tool-real")));
  CHECK_FALSE(exec_allowed(in, d.target("ok-real")));
  // A name blocked whose target an allowed name shares: the denial comes last and wins.
  in.policy.process.blocked_commands.push_back((d.bin / "tool").string());
  in.resolved_programs.clear();
  in.resolved_allowed.clear();
  add_program_links(in, find_program_links(in));
  CHECK_FALSE(exec_allowed(in, d.target("tool-real")));
}

TEST_CASE(
    "seatbelt host programs: a name with a slash is itself, and missing, relative and plain "
    "places give no link",
    "[seatbelt]") {
  LinkDir d;
  ProfileInput in = profile_input(plan_with_path(d), "/private/tmp/r");
  in.policy.process.blocked_commands = {(d.bin / "curl").string(), "no-such-program", "bin/ok",
                                        "plain"};
  auto links = find_program_links(in);
  // The multi-call programs denied with any blocked name are looked up too: not these names.
  std::erase_if(links, [](const ProgramLink& l) {
    auto base = fs::path(l.candidate).filename();
    return base == "busybox" || base == "toybox";
  });
  REQUIRE(links.size() == 1);
  CHECK(links[0].candidate == (d.bin / "curl").string());
  CHECK(links[0].target == fs::canonical(d.real / "curl-real").string());
  CHECK(links[0].blocked);
  CHECK(describe_program_links(links).front() ==
        links[0].candidate + " -> " + links[0].target + " (blocked: denied too)");
}

TEST_CASE("seatbelt backend: policy compile shows the programs' links resolved on this host",
          "[seatbelt]") {
  LinkDir d;
  Plan plan = plan_with_path(d);
  plan.policy.process.blocked_commands.push_back("curl");
  SeatbeltBackend b(BackendContext{"seatbelt", nullptr, "/var/tmp"});
  auto text = b.compile(plan);
  REQUIRE(text);
  std::string target = fs::canonical(d.real / "curl-real").string();
  CHECK(has(*text, "\n; programs that resolve to another file on this host:\n"));
  CHECK(has(*text,
            "\n;   " + (d.bin / "curl").string() + " -> " + target + " (blocked: denied too)\n"));
  CHECK(has(*text, " = " + macos_path(target) + "\n"));  // a parameter
}

TEST_CASE(
    "seatbelt host programs: a multi-call program is neither run nor read once any command is "
    "blocked, and is left alone otherwise",
    "[seatbelt]") {
  LinkDir d;
  LinkDir::program(d.real / "busybox-real");
  fs::create_symlink(d.real / "busybox-real", d.bin / "busybox");
  ProfileInput in = profile_input(plan_with_path(d), "/private/tmp/r");
  in.policy.process.blocked_commands.clear();
  add_program_links(in, find_program_links(in));
  CHECK(exec_allowed(in, macos_path((d.bin / "busybox").string())));
  CHECK(exec_allowed(in, d.target("busybox-real")));
  in.policy.process.blocked_commands = {"curl"};
  in.resolved_programs.clear();
  add_program_links(in, find_program_links(in));
  CHECK_FALSE(exec_allowed(in, macos_path((d.bin / "busybox").string())));
  CHECK_FALSE(exec_allowed(in, d.target("busybox-real")));  // through its link
  CHECK(exec_allowed(in, d.target("ok-real")));
  // Nor read, so that no copy of one runs; a program that is not denied stays readable.
  CHECK_FALSE(data_readable(in, d.target("busybox-real")));
  CHECK_FALSE(data_readable(in, d.target("curl-real")));
  CHECK(data_readable(in, d.target("ok-real")));
}
