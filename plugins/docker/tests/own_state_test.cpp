// cordon's own state (Plan::protected_paths) is out of the command's reach whatever the policy
// grants: inside a mount it is hidden by an empty mode-000 bind (and the report says so under
// fs.read.block), a mount of or inside it is refused, and one that does not exist yet inside a
// writable mount is noted. Both ways: what lies beside it is the command's as granted.
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "container_spec.hpp"
#include "error_code.hpp"
#include "support.hpp"

using cordon::testing::error_code_of;

using namespace cordon;
using namespace cordon::docker;
using namespace cordon::docker::test;

namespace fs = std::filesystem;

TEST_CASE("own state: a mount of cordon's state, or inside it, is refused", "[unit]") {
  std::vector<HostMount> mounts{{"/home/u/proj", "/home/u/proj", true, "workspace"}};
  CHECK_NOTHROW(refuse_mounts_of_own_state(mounts, {"/home/u/.local/state/cordon"}));
  CHECK_NOTHROW(refuse_mounts_of_own_state(mounts, {"/home/u/proj2"}));
  CHECK(error_code_of([&] { refuse_mounts_of_own_state(mounts, {"/home/u/proj"}); }) == "CRD4004");
  CHECK(error_code_of([&] { refuse_mounts_of_own_state(mounts, {"/home/u"}); }) == "CRD4004");
  // Within a mount it is hidden instead (masks_for, as blocked paths are).
  auto masks = masks_for(mounts, {{"/home/u/proj/.state", true, true}});
  CHECK(masks == std::vector<std::pair<std::string, bool>>{{"/home/u/proj/.state", true}});
}

TEST_CASE("own state: the directories down to a masked path in a writable mount are pinned",
          "[unit]") {
  std::vector<HostMount> mounts{{"/w", "/w", true, "workspace"},
                                {"/r", "/r", false, "backends.docker.mounts"},
                                {"/w/a/m", "/w/a/m", true, "filesystem.write"}};
  auto pins = pins_for(mounts, {{"/w/a/m/b/secret", true, false},
                                {"/r/x/y", true, false},        // read-only: nothing can move
                                {"/w/c", true, true},           // directly in the mount
                                {"/w/c/d/e", true, false},      // inside a masked directory
                                {"/w/gone/z", false, false}});  // not there: nothing to mask
  std::vector<std::string> targets;
  for (const auto& p : pins) {
    CHECK(p.source == p.target);
    CHECK(p.writable);
    CHECK(std::string(p.why) == kPinWhy);
    targets.push_back(p.target);
  }
  // /w/a once, /w/a/m is a mount already, /w/a/m/b from the inner mount.
  CHECK(targets == std::vector<std::string>{"/w/a", "/w/a/m/b"});
}

TEST_CASE("own state: cordon's state inside a writable mount is hidden from the command",
          "[docker][own_state]") {
  if (!docker_ready()) return;
  TempDir ws;
  fs::create_directories(ws / "jobs/j1");
  for (const char* dir : {"jobs", "jobs/j1"}) ::chown((ws / dir).c_str(), 65534, 65534);
  write_file(ws / "jobs/j1/policy.toml", "read = \"host\"\n");
  write_file(ws / "mine.txt", "mine\n");
  auto policy = base_policy(ws.path().string());
  auto plan = make_plan(policy, ws.path().string(),
                        {"/bin/sh", "-c",
                         "cat mine.txt; cat jobs/j1/policy.toml || echo read-denied; "
                         "ls jobs || echo list-denied; echo x > jobs/j1/policy.toml || "
                         "echo write-denied; echo y > jobs/new || echo create-denied"});
  plan.protected_paths = {ws / "jobs", "/var/tmp/cordon-no-such-state-dir"};
  CaptureSink sink;
  auto r = backend().run(plan, sink);
  INFO(sink.err);
  CHECK_FALSE(r.error);
  CHECK(sink.out == "mine\nread-denied\nlist-denied\nwrite-denied\ncreate-denied\n");
  CHECK(read_file(ws / "jobs/j1/policy.toml") == "read = \"host\"\n");
  CHECK_FALSE(fs::exists(ws / "jobs/new"));
  CHECK(reported(r, "fs.read.block") ==
        "cordon's own state hidden by an empty mode-000 bind: " + (ws / "jobs"));
  // Both ways: without it among the protected paths, the same directory is the command's.
  plan.protected_paths.clear();
  CaptureSink open;
  auto granted = backend().run(plan, open);
  CHECK_FALSE(granted.error);
  CHECK(open.out == "mine\nread = \"host\"\nj1\n");
  CHECK(read_file(ws / "jobs/new") == "y\n");
}

TEST_CASE("own state: a workspace in cordon's state is refused, and so is a missing one",
          "[docker][own_state]") {
  if (!docker_ready()) return;
  TempDir ws;
  fs::create_directories(ws / "inner");
  ::chown((ws / "inner").c_str(), 65534, 65534);
  auto plan = make_plan(base_policy(ws / "inner"), ws / "inner", {"true"});
  plan.protected_paths = {ws.path()};
  CaptureSink sink;
  auto r = backend().run(plan, sink);
  REQUIRE(r.error);
  CHECK(r.error->code() == "CRD4004");
  CHECK(r.error->message() == "the workspace '" + (ws / "inner") +
                                  "' is inside cordon's own state '" + ws.path().string() +
                                  "', which no command may reach");
  // Not there yet, in the writable workspace: the command could make it, so the run is refused.
  plan.protected_paths = {ws / "inner/.cordon-state"};
  CaptureSink missing;
  auto m = backend().run(plan, missing);
  REQUIRE(m.error);
  CHECK(m.error->code() == "CRD1003");
  CHECK(m.error->message() == "cordon's own state '" + (ws / "inner/.cordon-state") +
                                  "' does not exist, and the command could create it in the "
                                  "writable mount '" +
                                  (ws / "inner") + "' for a later cordon to trust");
  // Nor by a symlinked level that leads into the mount.
  fs::create_symlink(ws / "inner", ws / "link");
  plan.protected_paths = {ws / "link/.cordon-state"};
  CaptureSink linked;
  auto l = backend().run(plan, linked);
  REQUIRE(l.error);
  CHECK(l.error->code() == "CRD1003");
  // Made, it is masked and the run goes ahead.
  fs::create_directory(ws / "inner/.cordon-state");
  CaptureSink made;
  auto ok = backend().run(plan, made);
  INFO(made.err);
  CHECK_FALSE(ok.error);
}

TEST_CASE("own state: as root, the state of the user the container runs as is hidden from it",
          "[docker][own_state]") {
  if (!docker_ready()) return;
  auto user = user_with_home();
  if (!user) return;
  const passwd* pw = &*user;
  // The workspace's owner is the container's user; their later cordon trusts their config.
  const fs::path home = pw->pw_dir, theirs = home / ".config" / "cordon";
  // Their state as their first run makes it (missing, in a writable mount, it refuses the run).
  make_their_state(*pw);
  TempDir ws;
  REQUIRE(::chown(ws.path().c_str(), pw->pw_uid, pw->pw_gid) == 0);
  const std::string marker = "cordon-docker-theirs-" + std::to_string(::getpid());
  struct Remove {
    std::vector<fs::path> paths;
    ~Remove() {
      std::error_code ec;
      for (const auto& p : paths) fs::remove(p, ec);
    }
  } remove{{theirs / marker, home / ("." + marker)}};
  auto policy = base_policy(ws.path().string());
  policy.filesystem.write.push_back(home.string());
  auto plan = make_plan(
      policy, ws.path().string(),
      {"/bin/sh", "-c",
       "id -u; echo x > " + (theirs / marker).string() + " || echo write-denied; echo y > " +
           (home / ("." + marker)).string() + " && echo wrote"});
  CaptureSink sink;
  auto r = backend().run(plan, sink);
  INFO(sink.err);
  CHECK_FALSE(r.error);
  CHECK(sink.out == std::to_string(pw->pw_uid) + "\nwrite-denied\nwrote\n");
  CHECK_FALSE(fs::exists(theirs / marker));
  CHECK(read_file(home / ("." + marker)) == "y\n");
  CHECK(reported(r, "fs.read.block").find(theirs.string()) != std::string::npos);
}
