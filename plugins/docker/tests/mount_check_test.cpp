// The identity check of bind mounts: every bind of a container has an identity recorded on the
// host, the waiter compares it with the container's mount before the exec, and a run whose mount
// is not what cordon checked is refused without running the command. Units on a real host tree,
// and runs against the real daemon, both ways: the waiter driven with forged identities, and a
// source really swapped between the check and the container's start.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <thread>

#include "api.hpp"
#include "attached_run.hpp"
#include "container.hpp"
#include "container_spec.hpp"
#include "error_code.hpp"
#include "host_side.hpp"
#include "mount_identity.hpp"
#include "pool.hpp"
#include "support.hpp"
#include "verified_file.hpp"

using cordon::testing::error_code_of;

using namespace cordon;
using namespace cordon::docker;
using namespace cordon::docker::test;

namespace fs = std::filesystem;

namespace {

SourceIdentity stat_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return {static_cast<std::uint64_t>(st.st_dev),
          static_cast<std::uint64_t>(st.st_ino),
          S_ISDIR(st.st_mode),
          path,
          st.st_uid,
          st.st_gid,
          nullptr};
}

// What execute() makes for a run, up to the container: the spec, its body, the identities.
struct Prepared {
  Settings settings;
  Plan plan;
  std::string mask_file, mask_dir, waiter;
  std::vector<HostMount> mounts;
  SourceIdentities identities;
  ContainerSpec spec;
  boost::json::object body;

  Prepared(const Policy& policy, const std::string& ws, std::vector<std::string> argv,
           const std::vector<ExtraMount>& extra, const std::string& state)
      : settings(parse_settings(test_settings())), plan(make_plan(policy, ws, std::move(argv))) {
    settings.mounts = extra;
    PrivateDir dir = PrivateDir::create(state);
    Masks masks = ensure_masks(dir);
    SourceIdentity copy = ensure_waiter(dir);
    mask_file = masks.file.host_path;
    mask_dir = masks.dir.host_path;
    waiter = copy.host_path;
    identities = {{mask_file, masks.file}, {mask_dir, masks.dir}, {waiter, copy}};
    std::vector<std::string> notes;
    identities.emplace(ws, source_identity({ws, "workspace"}));
    auto writes = existing_write_paths(plan, notes, identities);
    mounts = host_mounts(plan, settings, writes);
    identify_sources(sources_to_identify(mounts, mask_file, mask_dir, waiter), identities);
    SpecInput in{plan,
                 settings,
                 "mountcheck",
                 container_user(settings, identities.at(ws)),
                 {},
                 mounts,
                 blocked_paths(plan, notes),
                 mask_file,
                 mask_dir,
                 owner_labels(),
                 {},
                 {},
                 nullptr,
                 {}};
    spec = make_spec(in);
    body = waiter_body(spec.body, waiter, "mountcheck-" + new_run_id());
  }

  // Creates the container and runs the plan in it with `checks`, one-shot or started first as
  // the pool does; nullopt when attach_and_run() ran nothing for the caller to run one-shot.
  std::optional<RunResult> run(const std::vector<MountCheck>& checks, bool pooled,
                               CaptureSink& sink, std::optional<uid_t> expect_uid = std::nullopt) {
    Daemon daemon(resolve_endpoint(settings.socket, settings.host));
    Container container(daemon, "cordon-mountcheck-" + new_run_id(), body);
    if (pooled) container.start();
    RunResult r;
    if (!attach_and_run(daemon, container, pooled, checks, expect_uid, Masked{}, plan, sink, r))
      return std::nullopt;
    return r;
  }
};

}  // namespace

TEST_CASE("mount check: every bind of the container has an identity to check", "[unit]") {
  TempDir ws, other;
  OwnDir state;
  fs::create_directories(ws / "out");
  fs::create_directories(ws / "secret");
  fs::create_directories(other / "data");
  write_file(other / "key", "k");
  auto policy = base_policy(ws.path().string());
  policy.filesystem.write.push_back(ws / "out");
  policy.filesystem.blocked = {ws / "secret", other / "key"};
  policy.filesystem.home = HomeMode::host;
  Prepared p(policy, ws.path().string(), {"true"},
             {{other.path().string(), "/data", false}, {other / "data", "/rw", true}},
             state.path().string());
  const auto& binds = p.body.at("HostConfig").as_object().at("Mounts").as_array();
  // workspace, out, two operator mounts, HOME, two masks (a directory and a file), the waiter
  REQUIRE(binds.size() == 8);
  auto checks = mount_checks(p.body, p.identities);
  REQUIRE(checks.size() == binds.size());
  for (std::size_t i = 0; i < binds.size(); ++i) {
    const auto& b = binds[i].as_object();
    CHECK(checks[i].check.target == b.at("Target").as_string());
    CHECK(checks[i].source == b.at("Source").as_string());
    auto real = stat_of(std::string(b.at("Source").as_string()));
    CHECK(checks[i].check.dev == real.dev);
    CHECK(checks[i].check.ino == real.ino);
  }
  CHECK(checks.back().check.target == kWaiterTarget);
  // Both ways: a bind whose source was not identified is a fault, never a run without a check.
  auto partial = p.identities;
  partial.erase(p.mask_dir);
  CHECK(error_code_of([&] { mount_checks(p.body, partial); }) == "CRD5003");
}

TEST_CASE("mount check: more binds than the waiter reads are refused, never cut short", "[unit]") {
  boost::json::array binds;
  SourceIdentities ids{{"/s", {1, 2, true, "/s", 0, 0, nullptr}}};
  for (std::size_t i = 0; i <= kMaxWaiterChecks; ++i)
    binds.push_back(boost::json::object{
        {"Type", "bind"}, {"Source", "/s"}, {"Target", "/t" + std::to_string(i)}});
  boost::json::object body{{"HostConfig", boost::json::object{{"Mounts", binds}}}};
  CHECK(error_code_of([&] { mount_checks(body, ids); }) == "CRD1003");
  binds.pop_back();
  body["HostConfig"].as_object()["Mounts"] = binds;
  CHECK(mount_checks(body, ids).size() == kMaxWaiterChecks);
}

TEST_CASE("mount check: a source is opened once without links and held, never made canonical",
          "[unit]") {
  TempDir t;
  fs::create_directories(t / "real/dir");
  fs::create_symlink(t / "real", t / "link");
  auto real = stat_of(t / "real/dir");
  auto id = source_identity({t / "real/dir", "workspace"});
  CHECK(id.dev == real.dev);
  CHECK(id.ino == real.ino);
  CHECK(id.directory);
  CHECK(id.host_path == (t / "real/dir"));
  // Through a link, whoever made it: refused naming the link, never resolved to its target.
  try {
    source_identity({t / "link/dir", "workspace"});
    FAIL("a source through a symlink was identified");
  } catch (const Error& e) {
    CHECK(e.code() == "CRD4004");
    CHECK(e.message() == "the workspace '" + (t / "link/dir") + "' passes through a symlink ('" +
                             (t / "link") + "' -> '" + (t / "real") +
                             "'): docker would mount whatever the link names when the container "
                             "starts");
  }
  CHECK(error_code_of([&] { source_identity({t / "missing", "workspace"}); }) == "CRD1003");
  CHECK_FALSE(existing_source_identity({t / "missing", "filesystem.write path"}));
  // The descriptor is the object that was checked: renamed away and replaced by another
  // directory, the held one is still the first (and its inode cannot be reused meanwhile).
  REQUIRE(id.held);
  fs::rename(t / "real/dir", t / "real/moved");
  fs::create_directories(t / "real/dir");
  struct stat held {};
  REQUIRE(::fstat(id.held->fd(), &held) == 0);
  CHECK(held.st_ino == real.ino);
  CHECK(stat_of(t / "real/dir").ino != real.ino);
}

TEST_CASE("mount check: the waiter's failure statuses become refusals naming the mount", "[unit]") {
  std::vector<MountCheck> checks{{{"/w", 1, 2}, "/w", {1, 2, true, "/host/w", 0, 0, nullptr}},
                                 {{"/w/f", 3, 4}, "/m", {3, 4, false, "/host/m", 0, 0, nullptr}}};
  auto mismatch = check_failure(kMountMismatch | 1, checks);
  REQUIRE(mismatch);
  CHECK(mismatch->code() == "CRD4004");
  CHECK(mismatch->message() ==
        "mount /w/f is not the file cordon checked (host path /host/m): it was changed after the "
        "check; the command was not run");
  auto dir = check_failure(kMountMismatch, checks);
  REQUIRE(dir);
  CHECK(
      dir->message().starts_with("mount /w is not the directory cordon checked (host path "
                                 "/host/w)"));
  auto unreadable = check_failure(kMountUnreadable | (13u << 16), checks);
  REQUIRE(unreadable);
  CHECK(unreadable->code() == "CRD1003");
  CHECK(unreadable->message() ==
        "mount /w cannot be checked in the container: Permission denied; the command was not run");
  for (std::int64_t status : {0, 1, 125, 127, 137, 255, 256})
    CHECK_FALSE(check_failure(status, checks));
}

TEST_CASE("mount check: matching mounts run, a forged identity is refused before the exec",
          "[docker]") {
  if (!docker_ready()) return;
  for (bool pooled : {false, true}) {
    INFO("pooled: " << pooled);
    TempDir ws;
    OwnDir state;
    fs::create_directories(ws / "out");
    ::chown((ws / "out").c_str(), 65534, 65534);
    auto policy = base_policy(ws.path().string());
    policy.filesystem.write.push_back(ws / "out");
    std::string marker = ws / "out/ran";
    Prepared p(policy, ws.path().string(), {"/bin/sh", "-c", "touch " + marker + " && echo ran"},
               {}, state.path().string());
    auto checks = mount_checks(p.body, p.identities);
    CaptureSink ok;
    auto good = p.run(checks, pooled, ok);
    INFO(ok.err);
    REQUIRE(good);
    CHECK_FALSE(good->error);
    CHECK(good->exit_code == 0);
    CHECK(ok.out == "ran\n");
    CHECK(fs::exists(marker));
    fs::remove(marker);
    // The write path's check forged: the waiter refuses, and the command never ran. A pooled
    // container that fails is given back (the caller makes a fresh one, checked in turn).
    auto forged = checks;
    for (auto& c : forged)
      if (c.check.target == ws / "out") ++c.check.ino;
    CaptureSink bad;
    auto refused = p.run(forged, pooled, bad);
    CHECK(refused.has_value() == !pooled);
    if (refused) {
      REQUIRE(refused->error);
      CHECK(refused->error->code() == "CRD4004");
      CHECK(refused->error->message().starts_with("mount " + ws.path().string() +
                                                  "/out is not the directory cordon checked"));
      CHECK(refused->exit_code == -1);
    }
    CHECK(bad.out.empty());
    CHECK(bad.err.empty());
    CHECK_FALSE(fs::exists(marker));
    // The right identity at a target that is no mount (the directory, reached through the
    // workspace's mount) is refused too: its own bind went elsewhere.
    fs::create_directories(ws / "plain");
    auto unmounted = checks;
    auto plain = stat_of(ws / "plain");
    unmounted.push_back({{ws / "plain", plain.dev, plain.ino}, ws / "plain", plain});
    CaptureSink none;
    auto not_mount = p.run(unmounted, pooled, none);
    CHECK(not_mount.has_value() == !pooled);
    if (not_mount) {
      REQUIRE(not_mount->error);
      CHECK(not_mount->error->code() == "CRD4004");
      CHECK(not_mount->error->message().starts_with("mount " + ws.path().string() +
                                                    "/plain is not the directory cordon checked"));
    }
    CHECK(none.out.empty());
    CHECK_FALSE(fs::exists(marker));
  }
}

TEST_CASE("mount check: a source swapped for a symlink after the check is refused", "[docker]") {
  if (!docker_ready()) return;
  TempDir ws, tree;
  OwnDir state;
  // The operator mounts tree/dir/data; after cordon checked it, tree/dir becomes a link to
  // tree/evil, whose data the daemon (following links as root) would mount instead.
  fs::create_directories(tree / "dir/data");
  fs::create_directories(tree / "evil/data");
  ::chown((tree / "dir/data").c_str(), 65534, 65534);
  ::chown((tree / "evil/data").c_str(), 65534, 65534);
  std::string source = tree / "dir/data";
  Prepared p(base_policy(ws.path().string()), ws.path().string(),
             {"/bin/sh", "-c", "touch /data/ran; echo ran"}, {{source, "/data", true}},
             state.path().string());
  auto checks = mount_checks(p.body, p.identities);
  fs::rename(tree / "dir", tree / "dir-checked");
  fs::create_directory_symlink(tree / "evil", tree / "dir");
  CaptureSink sink;
  auto r = p.run(checks, false, sink);
  REQUIRE(r);
  REQUIRE(r->error);
  CHECK(r->error->code() == "CRD4004");
  CHECK(r->error->message() == "mount /data is not the directory cordon checked (host path " +
                                   source +
                                   "): it was changed after the check; the command was not run");
  CHECK_FALSE(fs::exists(tree / "evil/data/ran"));
  CHECK_FALSE(fs::exists(tree / "dir-checked/data/ran"));
  CHECK(sink.out.empty());
  // Both ways: put back, the same checks pass and the command runs in the checked directory.
  fs::remove(tree / "dir");
  fs::rename(tree / "dir-checked", tree / "dir");
  CaptureSink again;
  auto ok = p.run(checks, false, again);
  INFO(again.err);
  REQUIRE(ok);
  CHECK_FALSE(ok->error);
  CHECK(again.out == "ran\n");
  CHECK(fs::exists(tree / "dir/data/ran"));
}

TEST_CASE("mount check: a pool container made before a write path was replaced is not used",
          "[docker]") {
  if (!docker_ready()) return;
  TempDir ws;
  fs::create_directories(ws / "out");
  ::chown((ws / "out").c_str(), 65534, 65534);
  auto policy = base_policy(ws.path().string());
  policy.filesystem.write.push_back(ws / "out");
  DockerBackend b(BackendContext{"docker", nullptr, "/var/tmp/cordon-docker-test"});
  auto plan = make_plan(policy, ws.path().string(), {"/bin/sh", "-c", "echo x > out/f; echo ok"});
  plan.settings["pool"] = 1;
  for (int i = 0; i < 2; ++i) {  // the second run of a body warms the pool
    CaptureSink sink;
    REQUIRE(b.run(plan, sink).exit_code == 0);
  }
  // The pool's container made and started (its mounts are taken at its start), however long a
  // loaded daemon takes.
  auto started = [] { return !containers_made_by(::getpid(), true).empty(); };
  for (int i = 0; i < 300 && !started(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  REQUIRE(started());
  // Replaced (as a build tool does): the pooled container holds the old directory.
  fs::remove_all(ws / "out");
  fs::create_directories(ws / "out");
  ::chown((ws / "out").c_str(), 65534, 65534);
  CaptureSink sink;
  auto r = b.run(plan, sink);
  INFO(sink.err);
  CHECK_FALSE(r.error);
  CHECK(r.exit_code == 0);
  CHECK(sink.out == "ok\n");
  CHECK(read_file(ws / "out/f") == "x\n");
  for (const auto& n : r.notes) CHECK(n != "ran in a warm pool container");
}

TEST_CASE("mount check: the waiter runs nothing with another uid than it was told to expect",
          "[docker][identity]") {
  if (!docker_ready()) return;
  // A user the image names: cordon hid the host state of the uid the image's /etc/passwd gives
  // it, and tells the waiter to expect that uid. Here the container runs as 65534 (the
  // workspace's owner).
  TempDir ws;
  OwnDir state;
  auto policy = base_policy(ws.path().string());
  Prepared p(policy, ws.path().string(), {"/bin/sh", "-c", "id -u; echo ran > ran"}, {},
             state.path().string());
  auto checks = mount_checks(p.body, p.identities);
  for (bool pooled : {false, true}) {
    INFO("pooled: " << pooled);
    {
      CaptureSink sink;
      auto r = p.run(checks, pooled, sink, 4242);
      REQUIRE(r);
      REQUIRE(r->error);
      CHECK(r->error->code() == "CRD2015");
      CHECK(r->error->message().find("runs with another uid in the container than the image's "
                                     "/etc/passwd gives it (4242") != std::string::npos);
      CHECK(sink.out.empty());
      CHECK_FALSE(fs::exists(ws / "ran"));
    }
    // Both ways: the uid it has runs.
    CaptureSink sink;
    auto r = p.run(checks, pooled, sink, 65534);
    REQUIRE(r);
    INFO(sink.err);
    CHECK_FALSE(r->error);
    CHECK(sink.out == "65534\n");
    CHECK(fs::exists(ws / "ran"));
    fs::remove(ws / "ran");
  }
}
