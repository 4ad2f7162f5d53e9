// Tests of resolve_path and resolve_workspace: each symlink judged by where it lies and who could
// have written it; a path resolved once, with the identity of what it named.
#include <catch2/catch.hpp>
#include <cordon/sdk/error.hpp>
#include <cordon/sdk/path_guard.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>

#include "error_code.hpp"

using namespace cordon;
using cordon::testing::error_of;
namespace fs = std::filesystem;

namespace {

// A scratch directory under /tmp, canonical, removed at the end.
struct Scratch {
  std::string root;
  Scratch() {
    char tmpl[] = "/tmp/cordon-resolve-XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    root = fs::canonical(tmpl).string();
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
};

}  // namespace

TEST_CASE("path_resolve: a path without symlinks is itself, with its identity", "[paths]") {
  Scratch s;
  fs::create_directories(s.root + "/a/b");
  auto r = resolve_path(s.root + "/a//./b/", LinkRule::outside_bases, {s.root});
  CHECK(r.exists);
  CHECK(r.dir);
  CHECK(r.path == s.root + "/a/b");
  struct stat st {};
  REQUIRE(::stat((s.root + "/a/b").c_str(), &st) == 0);
  CHECK(r.dev == st.st_dev);
  CHECK(r.ino == st.st_ino);
  CHECK(r.links.empty());
  auto missing = resolve_path(s.root + "/a/none/x", LinkRule::any);
  CHECK_FALSE(missing.exists);
}

TEST_CASE("path_resolve: a symlink beneath a writable base is refused, elsewhere followed",
          "[paths]") {
  Scratch s;
  fs::create_directories(s.root + "/ws");
  fs::create_directories(s.root + "/outside/real");
  fs::create_directory_symlink(s.root + "/outside/real", s.root + "/ws/planted");
  fs::create_directory_symlink("real", s.root + "/outside/link");
  auto planted = resolve_path(s.root + "/ws/planted/x", LinkRule::outside_bases, {s.root + "/ws"});
  REQUIRE(planted.refused);
  CHECK(planted.refused->path == s.root + "/ws/planted");
  CHECK(planted.refused->target == s.root + "/outside/real");
  CHECK_FALSE(planted.exists);
  // The same link is followed when no base holds it, and the way it went is recorded.
  auto followed = resolve_path(s.root + "/ws/planted", LinkRule::outside_bases, {});
  CHECK(followed.exists);
  CHECK(followed.path == s.root + "/outside/real");
  auto relative = resolve_path(s.root + "/outside/link", LinkRule::outside_bases, {s.root + "/ws"});
  CHECK(relative.path == s.root + "/outside/real");
  REQUIRE(relative.links.size() == 1);
  CHECK(relative.links[0] == LinkStep{s.root + "/outside/link", "real"});
}

TEST_CASE("path_resolve: '..' after a symlink is the target's parent, as the kernel has it",
          "[paths]") {
  Scratch s;
  fs::create_directories(s.root + "/x/deep/dir");
  fs::create_directories(s.root + "/y");
  fs::create_directory_symlink(s.root + "/x/deep/dir", s.root + "/y/l");
  auto r = resolve_path(s.root + "/y/l/../", LinkRule::any);
  // Lexically "/y/l/.." would be "/y"; the path is normalised first, so this names /y.
  CHECK(r.path == s.root + "/y");
  fs::create_directory_symlink("..", s.root + "/x/deep/dir/up");
  auto up = resolve_path(s.root + "/y/l/up/dir", LinkRule::any);
  CHECK(up.exists);
  CHECK(up.path == s.root + "/x/deep/dir");
}

TEST_CASE("path_resolve: only root's system links are trusted", "[paths]") {
  Scratch s;
  fs::create_directories(s.root + "/real");
  fs::create_directory_symlink(s.root + "/real", s.root + "/mine");
  auto mine = resolve_path(s.root + "/mine", LinkRule::trusted_only);
  bool root_made_it = ::geteuid() == 0;
  // Made by root in a directory root owns (mkdtemp's, 0700): as root this link is trusted.
  CHECK(mine.refused.has_value() == !root_made_it);
  if (!::access("/bin", F_OK) && fs::is_symlink("/bin")) {
    auto system = resolve_path("/bin/sh", LinkRule::trusted_only);
    CHECK_FALSE(system.refused);
    CHECK(system.exists);
  }
}

TEST_CASE("path_resolve: a workspace through a planted link is refused, naming it", "[paths]") {
  Scratch s;
  fs::create_directories(s.root + "/proj");
  fs::create_directories(s.root + "/home");
  fs::create_directory_symlink(s.root + "/home", s.root + "/proj/pkg");
  if (::geteuid() == 0) REQUIRE(::lchown((s.root + "/proj/pkg").c_str(), 65534, 65534) == 0);
  auto why = error_of([&] { resolve_workspace(s.root + "/proj/pkg"); });
  CHECK(why.rfind("CRD4004", 0) == 0);
  CHECK(why.find("'" + s.root + "/proj/pkg' -> '" + s.root + "/home'") != std::string::npos);
  CHECK(resolve_workspace(s.root + "/proj").path == s.root + "/proj");
  CHECK(error_of([&] { resolve_workspace(s.root + "/none"); }).rfind("CRD4007", 0) == 0);
}
