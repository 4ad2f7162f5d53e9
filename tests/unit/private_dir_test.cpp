// Tests of cordon's own directories: created 0700 or verified at every level, never through a
// symlink or a directory someone else controls; files by name, never followed.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <catch2/catch.hpp>
#include <cordon/sdk/private_dir.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "error_code.hpp"
#include "private_dir_rule.hpp"

using cordon::testing::error_code_of;

using namespace cordon;
namespace fs = std::filesystem;
using detail::Trust;
using detail::untrusted_reason;

namespace {

// A fresh directory of our own under /tmp (root-owned and sticky), removed afterwards.
struct Scratch {
  fs::path base;
  Scratch() {
    char tmpl[] = "/tmp/cordon-pd-XXXXXX";
    base = ::mkdtemp(tmpl);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(base, ec);
  }
};

mode_t mode_of(const fs::path& p) {
  struct stat st {};
  REQUIRE(::lstat(p.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

std::string message_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& e) {
    return e.message();
  }
  return "";
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace

TEST_CASE("private dir: the rule trusts root's and cordon's levels, refuses others'",
          "[private_dir]") {
  // Ancestors: root's or cordon's, not writable by others; a root-owned sticky one is fine.
  CHECK_FALSE(untrusted_reason(0, S_IFDIR | 0755, 1000, Trust::ancestor));
  CHECK_FALSE(untrusted_reason(1000, S_IFDIR | 0755, 1000, Trust::ancestor));
  CHECK_FALSE(untrusted_reason(0, S_IFDIR | 01777, 1000, Trust::ancestor));
  CHECK(*untrusted_reason(1001, S_IFDIR | 0755, 1000, Trust::ancestor) ==
        "is owned by uid 1001, neither root nor cordon's uid 1000");
  CHECK(*untrusted_reason(1001, S_IFDIR | 0700, 0, Trust::ancestor) ==
        "is owned by uid 1001, neither root nor cordon's uid 0");
  CHECK(*untrusted_reason(0, S_IFDIR | 0777, 1000, Trust::ancestor) == "is writable by every user");
  CHECK(*untrusted_reason(1000, S_IFDIR | 0775, 1000, Trust::ancestor) ==
        "is writable by its group");
  // Sticky is an exception for root's directories only, and never for cordon's own level.
  CHECK(untrusted_reason(1000, S_IFDIR | 01777, 0, Trust::ancestor));
  CHECK(untrusted_reason(0, S_IFDIR | 01777, 0, Trust::own));
  // Cordon's own level: its uid's only (root's is not cordon's when cordon is not root).
  CHECK_FALSE(untrusted_reason(1000, S_IFDIR | 0700, 1000, Trust::own));
  CHECK_FALSE(untrusted_reason(0, S_IFDIR | 0700, 0, Trust::own));
  CHECK(*untrusted_reason(0, S_IFDIR | 0700, 1000, Trust::own) ==
        "is owned by uid 0, not by cordon's uid 1000");
  CHECK(untrusted_reason(1000, S_IFDIR | 0770, 1000, Trust::own));
  CHECK(untrusted_reason(1000, S_IFIFO | 0600, 1000, Trust::own));
}

TEST_CASE("private dir: missing levels are made 0700, existing ones are reused and tightened",
          "[private_dir]") {
  Scratch s;
  auto dir = PrivateDir::create(s.base / "a" / "b" / "c");
  CHECK(dir.path() == s.base / "a" / "b" / "c");
  for (const char* level : {"a", "a/b", "a/b/c"}) {
    INFO(level);
    CHECK(mode_of(s.base / level) == 0700);
  }
  // An existing directory of our own is used as it is; the directory itself loses the bits of
  // group and others.
  fs::create_directories(s.base / "x" / "y");
  fs::permissions(s.base / "x", fs::perms(0755));
  fs::permissions(s.base / "x" / "y", fs::perms(0755));
  auto again = PrivateDir::create(s.base / "x" / "y");
  CHECK(mode_of(s.base / "x") == 0755);
  CHECK(mode_of(s.base / "x" / "y") == 0700);
  // open() creates nothing.
  CHECK_FALSE(PrivateDir::open(s.base / "none" / "here"));
  CHECK_FALSE(fs::exists(s.base / "none"));
  CHECK(PrivateDir::open(s.base / "a" / "b"));
}

TEST_CASE("private dir: a symlink at any level is refused, naming it", "[private_dir]") {
  Scratch s;
  fs::create_directories(s.base / "real" / "inner");
  fs::create_directory_symlink(s.base / "real", s.base / "link");
  for (const fs::path& p : {s.base / "link", s.base / "link" / "inner"}) {
    INFO(p);
    CHECK(error_code_of([&] { PrivateDir::create(p); }) == "CRD1006");
    CHECK(message_of([&] {
            PrivateDir::open(p);
          }).starts_with("'" + (s.base / "link").string() + "' is a symlink"));
  }
  // The allowed twin: the real path.
  CHECK_NOTHROW(PrivateDir::create(s.base / "real" / "inner"));
}

TEST_CASE("private dir: a level writable by others is refused, never re-permitted",
          "[private_dir]") {
  Scratch s;
  fs::create_directories(s.base / "open" / "state");
  fs::permissions(s.base / "open", fs::perms(0777));
  CHECK(error_code_of([&] { PrivateDir::create(s.base / "open" / "state"); }) == "CRD1006");
  CHECK(message_of([&] { PrivateDir::create(s.base / "open" / "state"); }) ==
        "'" + (s.base / "open").string() +
            "' is writable by every user: cordon keeps its own state only where no other user "
            "can change it");
  CHECK(mode_of(s.base / "open") == 0777);
  // The directory itself, writable by its group: refused, left as it is.
  fs::permissions(s.base / "open", fs::perms(0700));
  fs::permissions(s.base / "open" / "state", fs::perms(0770));
  CHECK(error_code_of([&] { PrivateDir::create(s.base / "open" / "state"); }) == "CRD1006");
  CHECK(mode_of(s.base / "open" / "state") == 0770);
  fs::permissions(s.base / "open" / "state", fs::perms(0700));
  CHECK_NOTHROW(PrivateDir::create(s.base / "open" / "state"));
}

TEST_CASE("private dir: a directory another user owns is refused", "[private_dir][root]") {
  if (::geteuid() != 0) {
    WARN("skipped: only root can give a directory to another user");
    return;
  }
  Scratch s;
  fs::create_directories(s.base / "theirs" / "state");
  REQUIRE(::chown((s.base / "theirs").c_str(), 65534, 65534) == 0);
  CHECK(message_of([&] { PrivateDir::create(s.base / "theirs" / "state" / "jobs"); })
            .starts_with("'" + (s.base / "theirs").string() +
                         "' is owned by uid 65534, neither root nor cordon's uid 0"));
  CHECK_FALSE(fs::exists(s.base / "theirs" / "state" / "jobs"));
  // As the directory itself, too.
  REQUIRE(::chown((s.base / "theirs").c_str(), 0, 0) == 0);
  REQUIRE(::chown((s.base / "theirs" / "state").c_str(), 65534, 65534) == 0);
  CHECK(error_code_of([&] { PrivateDir::open(s.base / "theirs" / "state"); }) == "CRD1006");
  REQUIRE(::chown((s.base / "theirs" / "state").c_str(), 0, 0) == 0);
  CHECK_NOTHROW(PrivateDir::create(s.base / "theirs" / "state" / "jobs"));
}

TEST_CASE("private dir: files are made with O_EXCL and never opened through a symlink",
          "[private_dir]") {
  Scratch s;
  auto dir = PrivateDir::create(s.base / "d");
  std::ofstream(s.base / "target") << "precious";
  fs::create_symlink(s.base / "target", s.base / "d" / "log");
  CHECK(error_code_of([&] { dir.create_file("log", O_WRONLY); }) == "CRD5006");
  CHECK(error_code_of([&] { dir.open_file("log", O_WRONLY | O_APPEND); }) == "CRD1006");
  CHECK(error_code_of([&] { dir.read_file("log"); }) == "CRD1006");
  CHECK(slurp(s.base / "target") == "precious");
  // Replacing the name replaces the link, not what it points to.
  dir.write_file("log", "mine");
  CHECK(slurp(s.base / "target") == "precious");
  CHECK(fs::is_regular_file(fs::symlink_status(s.base / "d" / "log")));
  CHECK(*dir.read_file("log") == "mine");
  CHECK(mode_of(s.base / "d" / "log") == 0600);
  // A FIFO is refused rather than waited on.
  REQUIRE(::mkfifo((s.base / "d" / "fifo").c_str(), 0600) == 0);
  CHECK(error_code_of([&] { dir.read_file("fifo"); }) == "CRD1006");
  // The allowed twins.
  auto fd = dir.create_file("new", O_WRONLY);
  REQUIRE(fd);
  REQUIRE(::write(fd.get(), "abc", 3) == 3);
  CHECK(*dir.read_file("new") == "abc");
  CHECK_FALSE(dir.read_file("missing"));
  CHECK_FALSE(dir.open_file("missing", O_RDONLY));
  CHECK(error_code_of([&] { dir.read_file("new", 2); }) == "CRD5006");
}

TEST_CASE("private dir: names are one component", "[private_dir]") {
  Scratch s;
  auto dir = PrivateDir::create(s.base / "d");
  for (const char* name : {"", ".", "..", "a/b", "../x"}) {
    INFO(name);
    CHECK(error_code_of([&] { dir.write_file(name, "x"); }) == "CRD5006");
    CHECK(error_code_of([&] { dir.subdir(name); }) == "CRD5006");
  }
}

TEST_CASE("private dir: remove takes a tree without following a symlink out of it",
          "[private_dir]") {
  Scratch s;
  auto dir = PrivateDir::create(s.base / "state");
  auto job = dir.subdir("job1");
  CHECK(mode_of(s.base / "state" / "job1") == 0700);
  job.write_file("a", "1");
  job.subdir("deeper").write_file("b", "2");
  fs::create_directories(s.base / "outside");
  std::ofstream(s.base / "outside" / "keep") << "keep";
  fs::create_directory_symlink(s.base / "outside", s.base / "state" / "job1" / "out");
  auto names = job.entries();
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"a", "deeper", "out"});
  CHECK(dir.remove("job1"));
  CHECK_FALSE(fs::exists(s.base / "state" / "job1"));
  CHECK(slurp(s.base / "outside" / "keep") == "keep");
  CHECK_FALSE(dir.remove("job1"));
  CHECK(dir.entries().empty());
}
