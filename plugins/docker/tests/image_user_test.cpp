// A container user given by name (`backends.docker.user = "app"`) is a host uid too (the daemon
// shares the host's uids): the image's /etc/passwd says which, and that uid's state on the host
// is hidden from the command as any other command user's is (the waiter's check that it runs
// with that very uid is in mount_check_test.cpp; the SDK's tar reader has its own tests). A
// pure unit for the setting, then runs against the real daemon as root.
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "image_user.hpp"
#include "support.hpp"

using namespace cordon;
using namespace cordon::docker;
using namespace cordon::docker::test;

namespace fs = std::filesystem;

TEST_CASE("image user: only a setting whose user part is a name is looked up", "[unit]") {
  CHECK(user_name_of("app") == "app");
  CHECK(user_name_of("app:staff") == "app");
  CHECK(user_name_of("app:1000") == "app");
  CHECK_FALSE(user_name_of("1000"));
  CHECK_FALSE(user_name_of("1000:app"));
  CHECK_FALSE(user_name_of(""));
}

namespace {

// The test image with a passwd naming `name` as uid:gid; made once per uid (docker commit).
std::string named_image(const std::string& name, uid_t uid, gid_t gid) {
  std::string image = "cordon-test/busybox-named:" + std::to_string(uid);
  if (docker_cli("image inspect " + image) == 0) return image;
  OwnDir etc;
  write_file(etc / "passwd", "root:x:0:0:root:/root:/bin/sh\n" + name + ":x:" +
                                 std::to_string(uid) + ":" + std::to_string(gid) + "::/:/bin/sh\n" +
                                 "nobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n");
  std::string box = "cordon-named-" + std::to_string(::getpid());
  bool ok = docker_cli("create --name " + box + " " + test_image() + " /bin/true") == 0 &&
            docker_cli("cp " + (etc / "passwd") + " " + box + ":/etc/passwd") == 0 &&
            docker_cli("commit " + box + " " + image) == 0;
  docker_cli("rm -f " + box);
  REQUIRE(ok);
  return image;
}

struct Remove {
  std::vector<fs::path> paths;
  ~Remove() {
    std::error_code ec;
    for (const auto& p : paths) fs::remove(p, ec);
  }
};

}  // namespace

TEST_CASE("image user: the state of a user the image names is hidden from it",
          "[docker][own_state]") {
  if (!docker_ready()) return;
  auto user = user_with_home();
  if (!user) return;
  make_their_state(*user);
  const fs::path home = user->pw_dir, config = home / ".config" / "cordon";
  const std::string marker = "cordon-docker-named-" + std::to_string(::getpid());
  Remove remove{{config / marker, home / ("." + marker)}};
  TempDir ws;  // owned by 65534: without the setting, the container would run as nobody
  auto policy = base_policy(ws.path().string());
  policy.filesystem.write.push_back(home.string());
  auto plan = make_plan(
      policy, ws.path().string(),
      {"/bin/sh", "-c",
       "id -u; echo x > " + (config / marker).string() + " || echo write-denied; echo y > " +
           (home / ("." + marker)).string() + " && echo wrote"});
  plan.settings["image"] = named_image("cordon-named", user->pw_uid, user->pw_gid);
  plan.settings["user"] = "cordon-named";
  CaptureSink sink;
  auto r = backend().run(plan, sink);
  INFO(sink.err);
  REQUIRE_FALSE(r.error);
  // Both ways: their configuration cannot be written, the rest of their granted home can.
  CHECK(sink.out == std::to_string(user->pw_uid) + "\nwrite-denied\nwrote\n");
  CHECK_FALSE(fs::exists(config / marker));
  CHECK(read_file(home / ("." + marker)) == "y\n");
  CHECK(reported(r, "fs.read.block").find(config.string()) != std::string::npos);
}

TEST_CASE("image user: a name the image does not have is refused, naming the setting",
          "[docker][identity]") {
  if (!docker_ready()) return;
  TempDir ws;
  auto policy = base_policy(ws.path().string());
  auto plan = make_plan(policy, ws.path().string(), {"/bin/true"});
  plan.settings["user"] = "cordon-no-such-user";
  CaptureSink sink;
  auto r = backend().run(plan, sink);
  REQUIRE(r.error);
  CHECK(r.error->code() == "CRD2015");
  CHECK(r.error->message() ==
        "'backends.docker.user' ('cordon-no-such-user'): no such user in the image's /etc/passwd");
  CHECK(our_containers().empty());
}
