// The docker workspace is the one that was checked: cordon opens it once without following a
// link, holds it, and the waiter proves the daemon mounted that very directory. An unprivileged
// user swaps the workspace and a symlink to an outside directory (renameat2 RENAME_EXCHANGE) in a
// tight loop while cordon, as root, runs in it through the C++ API (no core check in front):
// no run may see the outside directory. Both ways: without the swapper every run works.
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "support.hpp"

using namespace cordon;
using namespace cordon::docker;
using namespace cordon::docker::test;
using namespace std::chrono_literals;

namespace fs = std::filesystem;

namespace {

// The attacker's tree: race/proj (a directory of theirs, marked "inside") and race/link, a
// symlink to `outside` (a directory of root's, marked "outside").
struct RaceTree {
  cordon::testing::TempDir race;
  OwnDir outside;

  explicit RaceTree(const Attacker& who) : race("cordon-dk-race-", who.uid, "/var/tmp") {
    write_file(outside / "marker", "outside\n");
    ::chmod(outside.path().c_str(), 0755);
    std::string proj = race / "proj", link = race / "link", target = outside.path().string();
    REQUIRE(as_attacker(who, [&] {
              int fd = -1;
              bool ok = ::mkdir(proj.c_str(), 0755) == 0 &&
                        (fd = ::open((proj + "/marker").c_str(), O_WRONLY | O_CREAT, 0644)) >= 0 &&
                        ::write(fd, "inside\n", 7) == 7 &&
                        ::symlink(target.c_str(), link.c_str()) == 0;
              return ok ? 0 : 1;
            }) == 0);
  }
  std::string proj() const { return race / "proj"; }
};

RunResult cat_marker(const std::string& workspace, CaptureSink& sink) {
  // The {workspace} write grant names the same path: it is resolved the same way.
  return backend().run(make_plan(base_policy(workspace), workspace, {"cat", "marker"}), sink);
}

}  // namespace

TEST_CASE("workspace race: a workspace through a symlink is refused, never resolved",
          "[docker][race]") {
  if (!docker_ready()) return;
  auto user = attacker();
  if (!user) return;
  RaceTree tree(*user);
  CaptureSink via_link;
  auto r = cat_marker(tree.race / "link", via_link);
  REQUIRE(r.error);
  CHECK(r.error->code() == "CRD4004");
  CHECK(r.error->message() == "the workspace '" + (tree.race / "link") +
                                  "' passes through a symlink ('" + (tree.race / "link") +
                                  "' -> '" + tree.outside.path().string() +
                                  "'): docker would mount whatever the link names when the "
                                  "container starts");
  CHECK(via_link.out.empty());
  // Both ways: the real directory runs, as its owner.
  CaptureSink real;
  auto ok = cat_marker(tree.proj(), real);
  CHECK_FALSE(ok.error);
  CHECK(real.out == "inside\n");
}

TEST_CASE("workspace race: swapped with a symlink in a tight loop, no run gets the outside",
          "[docker][race]") {
  if (!docker_ready()) return;
  auto user = attacker();
  if (!user) return;
  RaceTree tree(*user);
  std::string proj = tree.proj(), link = tree.race / "link";
  int ok = 0, refused = 0, outside = 0, other = 0, runs = 0;
  {
    AttackerLoop swapper(*user, [&] {
      ::syscall(SYS_renameat2, AT_FDCWD, proj.c_str(), AT_FDCWD, link.c_str(), RENAME_EXCHANGE);
    });
    auto until = std::chrono::steady_clock::now() + 12s;
    while (std::chrono::steady_clock::now() < until) {
      CaptureSink sink;
      auto r = cat_marker(proj, sink);
      ++runs;
      if (sink.out.find("outside") != std::string::npos) {
        ++outside;
        UNSCOPED_INFO("run " << runs << " saw the outside directory");
      } else if (!r.error && sink.out == "inside\n") {
        ++ok;
      } else if (r.error && r.error->code() == "CRD4004") {
        ++refused;
      } else {
        ++other;
        UNSCOPED_INFO("run " << runs << ": " << (r.error ? r.error->what() : sink.err));
      }
    }
  }
  INFO(runs << " runs in 12 s: " << ok << " in the workspace, " << refused << " refused, "
            << outside << " saw the outside directory, " << other << " other");
  WARN(runs << " runs in 12 s: " << ok << " in the workspace, " << refused << " refused (CRD4004), "
            << outside << " saw the outside directory, " << other << " other");
  CHECK(outside == 0);
  CHECK(other == 0);
  CHECK(runs >= 10);
  // Both ways: once the swapper is gone and the tree is put back, every run works again.
  struct stat st {};
  if (::lstat(proj.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
    ::syscall(SYS_renameat2, AT_FDCWD, proj.c_str(), AT_FDCWD, link.c_str(), RENAME_EXCHANGE);
  for (int i = 0; i < 3; ++i) {
    CaptureSink sink;
    auto r = cat_marker(proj, sink);
    CHECK_FALSE(r.error);
    CHECK(sink.out == "inside\n");
  }
  CHECK(read_file(tree.outside / "marker") == "outside\n");
}
