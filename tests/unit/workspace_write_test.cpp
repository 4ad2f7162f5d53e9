// Tests of Workspace::write beyond the bytes: the replaced file's mode and owner carry over, and
// missing parents are created on request, beneath the workspace and through no symlink.
#include <sys/stat.h>
#include <unistd.h>
#include <catch2/catch.hpp>
#include <cordon/workspace.hpp>

#include <filesystem>
#include <fstream>

#include "error_code.hpp"

using cordon::testing::error_code_of;

using namespace cordon;
namespace fs = std::filesystem;

namespace {

// A fresh directory holding `ws/` (the workspace) and `outside/`, removed afterwards.
struct Scratch {
  fs::path base;
  Scratch() {
    char tmpl[] = "/tmp/cordon-wsw-XXXXXX";
    base = ::mkdtemp(tmpl);
    fs::create_directories(base / "ws");
    fs::create_directories(base / "outside");
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(base, ec);
  }
  fs::path ws() const { return base / "ws"; }
};

struct stat stat_of(const fs::path& p) {
  struct stat st {};
  REQUIRE(::lstat(p.c_str(), &st) == 0);
  return st;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), {}};
}

// Ids no account of this host needs to have: the tests only compare numbers.
constexpr uid_t kOwner = 4242;
constexpr gid_t kGroup = 4343;

bool as_root() {
  if (::geteuid() == 0) return true;
  WARN("skipping: giving files away needs root (uid " << ::geteuid() << ")");
  return false;
}

}  // namespace

TEST_CASE("workspace write: a replaced file keeps its permission bits", "[workspace]") {
  Scratch s;
  std::ofstream(s.ws() / "run.sh") << "#!/bin/sh\n";
  fs::permissions(s.ws() / "run.sh", fs::perms(0750));
  std::ofstream(s.ws() / "secret") << "s";
  fs::permissions(s.ws() / "secret", fs::perms(0600));
  Workspace w(s.ws());
  w.write("run.sh", "#!/bin/sh\necho new\n");
  w.write("secret", "t");
  CHECK((stat_of(s.ws() / "run.sh").st_mode & 07777) == 0750);
  CHECK((stat_of(s.ws() / "secret").st_mode & 07777) == 0600);
  CHECK(slurp(s.ws() / "run.sh") == "#!/bin/sh\necho new\n");
}

TEST_CASE("workspace write: new contents never keep set-user-ID or set-group-ID", "[workspace]") {
  Scratch s;
  std::ofstream(s.ws() / "tool") << "old";
  REQUIRE(::chmod((s.ws() / "tool").c_str(), 06755) == 0);
  Workspace w(s.ws());
  w.write("tool", "new");
  CHECK((stat_of(s.ws() / "tool").st_mode & 07777) == 0755);
}

TEST_CASE(
    "workspace write: as root, a replaced file keeps its owner and a new one gets the "
    "workspace's",
    "[workspace][root]") {
  if (!as_root()) return;
  Scratch s;
  REQUIRE(::chown(s.ws().c_str(), kOwner, kGroup) == 0);
  std::ofstream(s.ws() / "log") << "line 1\n";
  REQUIRE(::chown((s.ws() / "log").c_str(), kOwner + 1, kGroup + 1) == 0);
  REQUIRE(::chmod((s.ws() / "log").c_str(), 0664) == 0);
  Workspace w(s.ws());
  w.write("log", "line 1\nline 2\n");
  auto st = stat_of(s.ws() / "log");
  CHECK(st.st_uid == kOwner + 1);
  CHECK(st.st_gid == kGroup + 1);
  CHECK((st.st_mode & 07777) == 0664);
  w.write("new.txt", "n");
  CHECK(stat_of(s.ws() / "new.txt").st_uid == kOwner);
  CHECK(stat_of(s.ws() / "new.txt").st_gid == kGroup);
}

TEST_CASE("workspace write: missing parents are an error unless asked for", "[workspace]") {
  Scratch s;
  Workspace w(s.ws());
  CHECK(error_code_of([&] { w.write("notes/a.txt", "a"); }) == "CRD4009");
  CHECK_FALSE(fs::exists(s.ws() / "notes"));
  w.write("notes/a.txt", "a", {.parents = true});
  CHECK(slurp(s.ws() / "notes" / "a.txt") == "a");
  w.write("./deep/er/still/b.txt", "b", {.parents = true});
  CHECK(slurp(s.ws() / "deep" / "er" / "still" / "b.txt") == "b");
  CHECK(fs::is_directory(s.ws() / "deep" / "er"));
  // Existing directories on the way are used as they are.
  w.write("notes/c.txt", "c", {.parents = true});
  CHECK(slurp(s.ws() / "notes" / "c.txt") == "c");
}

TEST_CASE("workspace write: creating parents follows no symlink, in or out", "[workspace]") {
  Scratch s;
  fs::create_directories(s.ws() / "real");
  fs::create_symlink(s.base / "outside", s.ws() / "out");
  fs::create_symlink("real", s.ws() / "in");
  std::ofstream(s.ws() / "file") << "f";
  Workspace w(s.ws());
  WriteOptions parents{.parents = true};
  CHECK(error_code_of([&] { w.write("out/new/x", "x", parents); }) == "CRD4004");
  CHECK(error_code_of([&] { w.write("out/x", "x", parents); }) == "CRD4004");
  CHECK(error_code_of([&] { w.write("in/new/x", "x", parents); }) == "CRD4004");
  CHECK(error_code_of([&] { w.write("real/../../outside/x", "x", parents); }) == "CRD4004");
  CHECK(error_code_of([&] { w.write("/tmp/cordon-parents/x", "x", parents); }) == "CRD4004");
  CHECK(error_code_of([&] { w.write("file/x", "x", parents); }) == "CRD4009");
  CHECK(fs::is_empty(s.base / "outside"));
  CHECK(fs::is_empty(s.ws() / "real"));
  CHECK_FALSE(fs::exists("/tmp/cordon-parents"));
}

TEST_CASE("workspace write: no parent is created inside a blocked path", "[workspace]") {
  Scratch s;
  WorkspaceRules rules;
  rules.blocked = {fs::canonical(s.ws()) / "private"};
  Workspace w(s.ws(), rules);
  CHECK(error_code_of([&] { w.write("private/keys/k", "k", {.parents = true}); }) == "CRD4008");
  CHECK_FALSE(fs::exists(s.ws() / "private"));
}

TEST_CASE("workspace write: as root, created parents get the workspace's owner",
          "[workspace][root]") {
  if (!as_root()) return;
  Scratch s;
  REQUIRE(::chown(s.ws().c_str(), kOwner, kGroup) == 0);
  fs::create_directories(s.ws() / "mine");  // root's, and left so
  Workspace w(s.ws());
  w.write("mine/a/b/file", "x", {.parents = true});
  for (const auto& p :
       {s.ws() / "mine" / "a", s.ws() / "mine" / "a" / "b", s.ws() / "mine" / "a" / "b" / "file"}) {
    INFO(p);
    CHECK(stat_of(p).st_uid == kOwner);
    CHECK(stat_of(p).st_gid == kGroup);
  }
  CHECK(stat_of(s.ws() / "mine").st_uid == 0);
}
