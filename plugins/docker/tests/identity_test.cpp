// An identity setting cannot spell root: `backends.docker.user` is refused as written when it is
// root (`+0`, `00`, `0:0`, `root`, ...), and a name or a bare uid that the image resolves to
// uid 0, gid 0 or a supplementary group 0 runs nothing: the waiter, pid 1 of the container, checks
// who it is before the command. The daemon resolves names in the image's own /etc/passwd and
// /etc/group: the tests make an image from the test image with theirs (docker commit).
#include <sys/stat.h>

#include <filesystem>

#include "process.hpp"
#include "support.hpp"

using namespace cordon;
using namespace cordon::docker;
using namespace cordon::docker::test;

namespace fs = std::filesystem;

namespace {

// The test image with a passwd where toor is uid 0, app is 1234:1234 and wheeler is in group
// root; made once (docker create, cp, commit).
std::string ids_image() {
  static const std::string image = [] {
    std::string name = "cordon-test/busybox-ids:1";
    if (docker_cli("image inspect " + name) == 0) return name;
    OwnDir etc;
    write_file(etc / "passwd",
               "root:x:0:0:root:/root:/bin/sh\n"
               "toor:x:0:0:toor:/root:/bin/sh\n"
               "app:x:1234:1234:app:/:/bin/sh\n"
               "wheeler:x:2345:2345:wheeler:/:/bin/sh\n"
               "nobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n");
    write_file(etc / "group", "root:x:0:wheeler\napp:x:1234:\nwheeler:x:2345:\nnogroup:x:65534:\n");
    std::string box = "cordon-ids-" + std::to_string(::getpid());
    bool ok = docker_cli("create --name " + box + " " + test_image() + " /bin/true") == 0 &&
              docker_cli("cp " + (etc / "passwd") + " " + box + ":/etc/passwd") == 0 &&
              docker_cli("cp " + (etc / "group") + " " + box + ":/etc/group") == 0 &&
              docker_cli("commit " + box + " " + name) == 0;
    docker_cli("rm -f " + box);
    REQUIRE(ok);
    return name;
  }();
  return image;
}

// A run of `id -u; id -g; id -G` as `user` in ids_image().
struct Ids {
  TempDir ws;

  RunResult run(const std::string& user, CaptureSink& sink) {
    auto policy = base_policy(ws.path().string());
    auto plan = make_plan(policy, ws.path().string(), {"/bin/sh", "-c", "id -u; id -g; id -G"});
    plan.settings["image"] = ids_image();
    plan.settings["user"] = user;
    return backend().run(plan, sink);
  }
};

}  // namespace

TEST_CASE("identity: a user setting that spells root is refused before any container",
          "[docker][identity]") {
  if (!docker_ready()) return;
  Ids ids;
  for (const char* user : {"+0", "00", "0:0", "root", " 0", "1000:0", "app:root"}) {
    INFO("user = '" << user << "'");
    CaptureSink sink;
    auto r = ids.run(user, sink);
    REQUIRE(r.error);
    CHECK(r.error->code() == "CRD2015");
    CHECK(r.error->message().starts_with("'backends.docker.user' must"));
    CHECK(sink.out.empty());
  }
  CHECK(our_containers().empty());
}

TEST_CASE("identity: a name or uid the image resolves to root runs nothing", "[docker][identity]") {
  if (!docker_ready()) return;
  Ids ids;
  struct Case {
    const char* user;
    const char* which;
  };
  // toor is uid 0 in the image; a bare uid without a passwd entry gets gid 0 from the runtime;
  // wheeler is a member of group root.
  for (auto c : {Case{"toor", "uid 0"}, Case{"toor:app", "uid 0"}, Case{"4321", "gid 0"},
                 Case{"wheeler", "a supplementary group 0"}}) {
    INFO("user = '" << c.user << "'");
    CaptureSink sink;
    auto r = ids.run(c.user, sink);
    REQUIRE(r.error);
    CHECK(r.error->code() == "CRD2015");
    CHECK(r.error->message() == std::string("'backends.docker.user' ('") + c.user +
                                    "') runs with " + c.which +
                                    " in the image; the command was not run");
    CHECK(sink.out.empty());
    CHECK(sink.err.empty());
  }
  // Both ways: names and ids the image resolves to an unprivileged identity run as it.
  struct Allowed {
    const char* user;
    const char* out;
  };
  for (auto c : {Allowed{"app", "1234\n1234\n1234\n"}, Allowed{"4321:4321", "4321\n4321\n4321\n"},
                 Allowed{"app:nogroup", "1234\n65534\n65534\n"}}) {
    INFO("user = '" << c.user << "'");
    CaptureSink sink;
    auto r = ids.run(c.user, sink);
    INFO(sink.err);
    CHECK_FALSE(r.error);
    CHECK(r.exit_code == 0);
    CHECK(sink.out == c.out);
  }
}
