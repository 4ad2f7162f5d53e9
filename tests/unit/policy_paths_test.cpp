// Tests of resolve_paths: `~`, `{workspace}` and relative paths, expanded lexically.
#include <catch2/catch.hpp>
#include <cordon/policy_io.hpp>
#include <cordon/policy_loader.hpp>

#include "policy_test_support.hpp"

using namespace cordon;

namespace {

const PathContext kCtx{"/work/space", "/home/me"};

Policy with_paths(std::vector<std::string> read, std::vector<std::string> write,
                  std::vector<std::string> blocked) {
  Policy p;
  p.filesystem.read = std::move(read);
  p.filesystem.write = std::move(write);
  p.filesystem.blocked = std::move(blocked);
  return p;
}

}  // namespace

TEST_CASE("policy_paths: every form expands to an absolute normal path", "[policy][paths]") {
  Policy p = resolve_paths(
      with_paths({"/usr/", "/usr//lib/./x/..", "src", "./a/../b", "{workspace}"},
                 {"{workspace}/out/", "/tmp", "~"}, {"~/.ssh", "~/", "{workspace}/../elsewhere"}),
      kCtx);
  CHECK(p.filesystem.read == std::vector<std::string>{"/usr", "/usr/lib", "/work/space/src",
                                                      "/work/space/b", "/work/space"});
  CHECK(p.filesystem.write == std::vector<std::string>{"/work/space/out", "/tmp", "/home/me"});
  CHECK(p.filesystem.blocked ==
        std::vector<std::string>{"/home/me/.ssh", "/home/me", "/work/elsewhere"});
}

TEST_CASE("policy_paths: paths that do not exist still resolve", "[policy][paths]") {
  Policy p = resolve_paths(with_paths({"/no/such/dir"}, {"{workspace}/not/yet"}, {}),
                           PathContext{"/definitely/absent/ws", "/absent/home"});
  CHECK(p.filesystem.read == std::vector<std::string>{"/no/such/dir"});
  CHECK(p.filesystem.write == std::vector<std::string>{"/definitely/absent/ws/not/yet"});
}

TEST_CASE("policy_paths: '~user' and unknown placeholders are errors", "[policy][paths]") {
  Policy p = load_policy_text("version = 1\n[filesystem]\nwrite = [\"{workspace}\"]\n", "p.toml");
  p.filesystem.blocked = {"~root/.ssh", "/x/{home}"};
  p.origins["filesystem.blocked"] = Location{"p.toml", 4, 11};
  auto errors = test::errors_of([&] { resolve_paths(p, kCtx); });
  REQUIRE(errors.size() == 2);
  CHECK_ERROR_AT(errors, "CRD2005", 4, 11);
  CHECK(errors[0].message().find("'~root/.ssh'") != std::string::npos);
}

TEST_CASE("policy_paths: a relative path needs an absolute workspace", "[policy][paths]") {
  auto errors = test::errors_of([&] {
    resolve_paths(with_paths({"src", "/usr"}, {}, {}), PathContext{"rel", "/home"});
  });
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].code() == "CRD2005");
  auto home = test::errors_of([&] {
    resolve_paths(with_paths({"~/x"}, {}, {}), PathContext{"/ws", ""});
  });
  CHECK(home.at(0).code() == "CRD2005");
}

TEST_CASE("policy_paths: the shipped standard preset resolves", "[policy][paths]") {
  Policy p = resolve_paths(load_preset("standard"), kCtx);
  CHECK(p.filesystem.write == std::vector<std::string>{"/work/space"});
  CHECK(std::find(p.filesystem.blocked.begin(), p.filesystem.blocked.end(), "/home/me/.ssh") !=
        p.filesystem.blocked.end());
  for (const auto& path : p.filesystem.blocked) CHECK(path.front() == '/');
}

TEST_CASE("policy_paths: '~' paths are remembered, re-homed for another user, written back",
          "[policy][paths]") {
  Policy p = resolve_paths(
      with_paths({"~/tools", "/home/me/literal"}, {"~"}, {"~/.ssh", "/etc/shadow"}), kCtx);
  CHECK(p.filesystem.from_home == std::map<std::string, std::string>{{"/home/me/tools", "/tools"},
                                                                     {"/home/me", ""},
                                                                     {"/home/me/.ssh", "/.ssh"}});
  Policy other = for_command_home(p, "/home/u");
  // Grants follow the user the command runs as; blocked paths cover both homes.
  CHECK(other.filesystem.read == std::vector<std::string>{"/home/u/tools", "/home/me/literal"});
  CHECK(other.filesystem.write == std::vector<std::string>{"/home/u"});
  CHECK(other.filesystem.blocked ==
        std::vector<std::string>{"/home/me/.ssh", "/etc/shadow", "/home/u/.ssh"});
  CHECK(for_command_home(p, "relative").filesystem.read == p.filesystem.read);
  // The effective policy says `~` where the file did, so that re-resolving it keeps the record.
  auto text = to_toml(p);
  CHECK(text.find("\"~/tools\"") != std::string::npos);
  CHECK(text.find("\"~/.ssh\"") != std::string::npos);
  CHECK(text.find("\"/home/me/literal\"") != std::string::npos);
  Policy again = resolve_paths(load_policy_text(text, "again.toml"), kCtx);
  CHECK(again.filesystem.from_home == p.filesystem.from_home);
  CHECK(again.filesystem.blocked == p.filesystem.blocked);
}

TEST_CASE("policy_paths: a write grant covers the workspace only when it is it or an ancestor",
          "[policy][paths]") {
  Policy p;
  CHECK_FALSE(grants_write(p, "/w/proj"));
  p.filesystem.write = {"/w/proj"};
  CHECK(grants_write(p, "/w/proj"));
  CHECK(grants_write(p, "/w/proj/"));
  CHECK(grants_write(p, "/w/proj/sub"));
  CHECK_FALSE(grants_write(p, "/w/project"));
  CHECK_FALSE(grants_write(p, "/w"));
  p.filesystem.write = {"/w/other/../proj/"};
  CHECK(grants_write(p, "/w/proj"));
  p.filesystem.write = {"/tmp", "/"};
  CHECK(grants_write(p, "/anything"));
  p.filesystem.write = {"relative"};  // unresolved: never a grant
  CHECK_FALSE(grants_write(p, "/w/relative"));
  p.filesystem.write = {};
  p.filesystem.write_host = true;  // write = "host": nothing confined, the workspace included
  CHECK(grants_write(p, "/w/proj"));
}
