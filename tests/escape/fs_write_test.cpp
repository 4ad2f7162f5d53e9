// Writes outside filesystem.write: creating, modifying, truncating, renaming, chmod-ing, deleting,
// directly and through workspace symlinks and `..`; and the private /tmp.
#include <unistd.h>

#include <catch2/catch.hpp>

#include "cordon_run.hpp"
#include "probes.hpp"

using namespace escape;
using Catch::Matchers::Contains;

namespace {

/// A workspace file the sandbox owns, for the allowed side of each write test.
std::string own_file(const Scratch& s, const std::string& name) {
  std::string p = s.ws() + "/" + name;
  s.write(p, "workspace-content\n");
  s.give_to_sandbox(p);
  return p;
}

}  // namespace

TEST_CASE("escape: files cannot be created outside filesystem.write",
          "[escape][userns][fs][write][docker]") {
  Scratch s;
  auto ran = run_probe(
      s, confined(s.root()), "fsop",
      {"create", "new.txt", "create", s.ro() + "/new.txt", "create", s.unlisted() + "/new.txt",
       "create", s.root() + "/new.txt", "create", "../ro/dotdot.txt"});
  INFO(ran.describe());
  CHECK_THAT(ran.line("create new.txt"), IsOk());
  CHECK(s.read(s.ws() + "/new.txt") == "planted\n");
  CHECK_THAT(ran.line("create " + s.ro() + "/new.txt"), IsErr(kWriteDenied));
  CHECK_THAT(ran.line("create " + s.unlisted() + "/new.txt"), IsErr(kHiddenWriteDenied));
  CHECK_THAT(ran.line("create " + s.root() + "/new.txt"), IsErr(kHiddenWriteDenied));
  CHECK_THAT(ran.line("create ../ro/dotdot.txt"), IsErr(kWriteDenied));
  CHECK_FALSE(exists(s.ro() + "/new.txt"));
  CHECK_FALSE(exists(s.unlisted() + "/new.txt"));
  CHECK_FALSE(exists(s.root() + "/new.txt"));
  CHECK_FALSE(exists(s.ro() + "/dotdot.txt"));
}

TEST_CASE("escape: files outside filesystem.write cannot be modified",
          "[escape][userns][fs][write][docker]") {
  Scratch s;
  own_file(s, "mine.txt");
  auto ran = run_probe(s, confined(s.root()), "fsop",
                       {"append", "mine.txt", "append", s.ro() + "/file.txt", "append",
                        s.unlisted() + "/secret.txt"});
  INFO(ran.describe());
  CHECK_THAT(ran.line("append mine.txt"), IsOk());
  CHECK(s.read(s.ws() + "/mine.txt") == "workspace-content\nappended\n");
  CHECK_THAT(ran.line("append " + s.ro() + "/file.txt"), IsErr(kWriteDenied));
  CHECK_THAT(ran.line("append " + s.unlisted() + "/secret.txt"), IsErr(kHiddenWriteDenied));
  CHECK(s.read(s.ro() + "/file.txt") == kReadOnlyContent);
  CHECK(s.read(s.unlisted() + "/secret.txt") == kSecretContent);
}

TEST_CASE("escape: files outside filesystem.write cannot be truncated",
          "[escape][userns][fs][write][docker]") {
  Scratch s;
  own_file(s, "a.txt");
  own_file(s, "b.txt");
  auto ran = run_probe(s, confined(s.root()), "fsop",
                       {"truncate", "a.txt", "otrunc", "b.txt", "truncate", s.ro() + "/file.txt",
                        "otrunc", s.ro() + "/file.txt"});
  INFO(ran.describe());
  CHECK_THAT(ran.line("truncate a.txt"), IsOk());
  CHECK_THAT(ran.line("otrunc b.txt"), IsOk());
  CHECK(s.read(s.ws() + "/a.txt").empty());
  CHECK(s.read(s.ws() + "/b.txt").empty());
  CHECK_THAT(ran.line("truncate " + s.ro() + "/file.txt"), IsErr(kWriteDenied));
  CHECK_THAT(ran.line("otrunc " + s.ro() + "/file.txt"), IsErr(kWriteDenied));
  CHECK(s.read(s.ro() + "/file.txt") == kReadOnlyContent);
}

TEST_CASE("escape: files cannot be renamed out of, into or within read-only directories",
          "[escape][userns][fs][write][rename][docker]") {
  Scratch s;
  own_file(s, "a.txt");
  own_file(s, "plant.txt");
  auto ran = run_probe(
      s, confined(s.root()), "fsop",
      {"rename", "a.txt", "b.txt", "rename", s.ro() + "/file.txt", s.ro() + "/moved.txt", "rename",
       s.ro() + "/file.txt", "stolen.txt", "rename", "plant.txt", s.ro() + "/planted.txt", "rename",
       s.unlisted() + "/secret.txt", "stolen-secret.txt"});
  INFO(ran.describe());
  CHECK_THAT(ran.line("rename a.txt"), IsOk());
  CHECK(exists(s.ws() + "/b.txt"));
  CHECK_THAT(ran.line("rename " + s.ro() + "/file.txt"), IsErr(kLinkDenied));
  CHECK(ran.lines("rename " + s.ro() + "/file.txt").size() == 2);
  for (const auto& line : ran.lines("rename " + s.ro() + "/file.txt"))
    CHECK_THAT(line, IsErr(kLinkDenied));
  CHECK_THAT(ran.line("rename plant.txt"), IsErr(kLinkDenied));
  CHECK_THAT(ran.line("rename " + s.unlisted() + "/secret.txt"), IsErr(kLinkDenied));
  CHECK(s.read(s.ro() + "/file.txt") == kReadOnlyContent);
  CHECK(s.read(s.unlisted() + "/secret.txt") == kSecretContent);
  CHECK_FALSE(exists(s.ro() + "/moved.txt"));
  CHECK_FALSE(exists(s.ro() + "/planted.txt"));
  CHECK_FALSE(exists(s.ws() + "/stolen.txt"));
  CHECK_FALSE(exists(s.ws() + "/stolen-secret.txt"));
}

TEST_CASE("escape: files outside filesystem.write cannot be chmod-ed or touched",
          "[escape][userns][fs][write][chmod][docker]") {
  Scratch s;
  own_file(s, "mine.txt");
  auto ran = run_probe(
      s, confined(s.root()), "fsop",
      {"chmod", "mine.txt", "600", "chmod", s.ro() + "/file.txt", "777", "chmod", s.ro(), "777",
       "utime", s.ro() + "/file.txt", "chmod", s.unlisted() + "/secret.txt", "666"});
  INFO(ran.describe());
  CHECK_THAT(ran.line("chmod mine.txt"), IsOk());
  CHECK(file_mode(s.ws() + "/mine.txt") == 0600);
  // Landlock does not govern chmod or utimes; a read-only mount (or not owning the file) must.
  CHECK_THAT(ran.line("chmod " + s.ro() + "/file.txt"), IsErr(kMetadataDenied));
  CHECK_THAT(ran.line("chmod " + s.ro()), IsErr(kMetadataDenied));
  CHECK_THAT(ran.line("utime " + s.ro() + "/file.txt"), IsErr(kMetadataDenied));
  CHECK_THAT(ran.line("chmod " + s.unlisted() + "/secret.txt"),
             IsErr({"EPERM", "EROFS", "EACCES", "ENOENT"}));
  CHECK(file_mode(s.ro() + "/file.txt") == 0644);
  CHECK(file_mode(s.ro()) == 0755);
  CHECK(file_mode(s.unlisted() + "/secret.txt") == 0644);
}

TEST_CASE("escape: files and directories outside filesystem.write cannot be deleted or made",
          "[escape][userns][fs][write][docker]") {
  Scratch s;
  own_file(s, "gone.txt");
  s.mkdir(s.ro() + "/sub");
  auto ran = run_probe(s, confined(s.root()), "fsop",
                       {"unlink", "gone.txt", "mkdir", "newdir", "unlink", s.ro() + "/file.txt",
                        "rmdir", s.ro() + "/sub", "mkdir", s.ro() + "/newdir"});
  INFO(ran.describe());
  CHECK_THAT(ran.line("unlink gone.txt"), IsOk());
  CHECK_THAT(ran.line("mkdir newdir"), IsOk());
  CHECK_FALSE(exists(s.ws() + "/gone.txt"));
  CHECK(exists(s.ws() + "/newdir"));
  CHECK_THAT(ran.line("unlink " + s.ro() + "/file.txt"), IsErr(kWriteDenied));
  CHECK_THAT(ran.line("rmdir " + s.ro() + "/sub"), IsErr(kWriteDenied));
  CHECK_THAT(ran.line("mkdir " + s.ro() + "/newdir"), IsErr(kWriteDenied));
  CHECK(exists(s.ro() + "/file.txt"));
  CHECK(exists(s.ro() + "/sub"));
  CHECK_FALSE(exists(s.ro() + "/newdir"));
}

TEST_CASE("escape: writes through workspace symlinks do not leave the workspace",
          "[escape][userns][fs][write][symlink][docker]") {
  Scratch s;
  own_file(s, "mine.txt");
  REQUIRE(symlink((s.ws() + "/mine.txt").c_str(), (s.ws() + "/to-mine").c_str()) == 0);
  REQUIRE(symlink((s.ro() + "/file.txt").c_str(), (s.ws() + "/to-ro").c_str()) == 0);
  REQUIRE(symlink(s.ro().c_str(), (s.ws() + "/to-ro-dir").c_str()) == 0);
  auto ran = run_probe(s, confined(s.root()), "fsop",
                       {"append", "to-mine", "append", "to-ro", "truncate", "to-ro", "create",
                        "to-ro-dir/planted.txt", "chmod", "to-ro", "777"});
  INFO(ran.describe());
  CHECK_THAT(ran.line("append to-mine"), IsOk());
  CHECK(s.read(s.ws() + "/mine.txt") == "workspace-content\nappended\n");
  CHECK_THAT(ran.line("append to-ro"), IsErr(kWriteDenied));
  CHECK_THAT(ran.line("truncate to-ro"), IsErr(kWriteDenied));
  CHECK_THAT(ran.line("create to-ro-dir/planted.txt"), IsErr(kWriteDenied));
  CHECK_THAT(ran.line("chmod to-ro"), IsErr(kMetadataDenied));
  CHECK(s.read(s.ro() + "/file.txt") == kReadOnlyContent);
  CHECK(file_mode(s.ro() + "/file.txt") == 0644);
  CHECK_FALSE(exists(s.ro() + "/planted.txt"));
}

TEST_CASE("escape: /tmp is private unless the policy writes the host's",
          "[escape][userns][fs][write][tmp][docker]") {
  Scratch s;
  std::string name = "/tmp/" + unique_marker("cordon-escape-tmp");
  auto ran = run_probe(s, confined(s.root()), "fsop", {"create", name});
  INFO(ran.describe());
  // Either a private /tmp took the file or the write was refused; the host's /tmp never sees it.
  CHECK_THAT(ran.line("create " + name), IsOk() || IsErr(kHiddenWriteDenied));
  CHECK_FALSE(exists(name));

  auto policy = confined(s.root());
  policy.write->push_back("/tmp");
  auto shared = run_probe(s, policy, "fsop", {"create", name});
  INFO(shared.describe());
  CHECK_THAT(shared.line("create " + name), IsOk());
  CHECK(s.read(name) == "planted\n");
  unlink(name.c_str());
}
