// The SDK's rule for who the command runs as (cordon/sdk/identity.hpp): never cordon's
// privileges, the same user for the same workspace on every backend.
#include <sys/stat.h>
#include <unistd.h>
#include <catch2/catch.hpp>
#include <cordon/sdk/identity.hpp>

#include <cstdlib>
#include <filesystem>

using namespace cordon::sdk;

namespace {

std::optional<gid_t> primary(uid_t uid) {
  if (uid == 1000) return 1000;
  if (uid == 3000) return 0;  // a user whose primary group is root
  return std::nullopt;
}

CommandUserInput as_root(uid_t ws_uid, gid_t ws_gid) {
  CommandUserInput in;
  in.workspace_uid = ws_uid;
  in.workspace_gid = ws_gid;
  in.setting = "backends.mine.uid";
  in.primary_gid = primary;
  return in;
}

}  // namespace

TEST_CASE("sdk identity: an unprivileged cordon runs the command as itself", "[sdk][identity]") {
  CommandUserInput in = as_root(0, 0);
  in.euid = 1234;
  in.egid = 567;
  in.uid = 1000;  // a setting cannot raise it to another user
  auto who = choose_command_user(in);
  CHECK(who.uid == 1234);
  CHECK(who.gid == 567);
  CHECK_FALSE(who.other_user);
}

TEST_CASE("sdk identity: a root cordon never runs the command as root", "[sdk][identity]") {
  auto owner = choose_command_user(as_root(1000, 1000));
  CHECK(owner.uid == 1000);
  CHECK(owner.gid == 1000);
  CHECK(owner.other_user);
  CHECK(owner.reason == "the workspace's owner (uid 1000)");

  auto nobody = choose_command_user(as_root(0, 0));
  CHECK(nobody.uid == kNobody);
  CHECK(nobody.gid == kNobody);

  CommandUserInput set = as_root(1000, 1000);
  set.uid = 2000;
  auto named = choose_command_user(set);
  CHECK(named.uid == 2000);
  CHECK(named.gid == kNobody);  // no primary group, no fallback to the workspace's group
  CHECK(named.reason == "backends.mine.uid = 2000");

  // Group root is never given: not the primary group, not the workspace's.
  CHECK(choose_command_user(as_root(3000, 0)).gid == kNobody);
  CHECK(choose_command_user(as_root(2000, 0)).gid == kNobody);
  CHECK(choose_command_user(as_root(2000, 2500)).gid == 2500);
}

TEST_CASE("sdk identity: command_user reads the workspace's owner", "[sdk][identity]") {
  std::string t = (std::filesystem::temp_directory_path() / "cordon-cu-XXXXXX").string();
  REQUIRE(::mkdtemp(t.data()));
  if (::geteuid() == 0) {
    CHECK(command_user(t).uid == kNobody);  // root's workspace
    REQUIRE(::chown(t.c_str(), 4321, 4321) == 0);
    auto who = command_user(t);
    CHECK(who.uid == 4321);
    CHECK(who.gid == 4321);
    CHECK(who.other_user);
  } else {
    CHECK(command_user(t).uid == ::geteuid());
  }
  std::filesystem::remove_all(t);
}
