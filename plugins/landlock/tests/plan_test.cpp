// Pure planning: settings, identity, limits, search paths, the probe's verdicts. No system
// calls. (layout_test.cpp: the tree and the ruleset.)
#include <cordon/sdk/capabilities.hpp>

#include <boost/json/parse.hpp>

#include "host_paths.hpp"
#include "idmap.hpp"
#include "limits.hpp"
#include "probe.hpp"
#include "settings.hpp"
#include "spawn.hpp"
#include "support.hpp"

using namespace cordon;
using namespace cordon::landlock;

namespace {

boost::json::object table(const char* json) { return boost::json::parse(json).as_object(); }

}  // namespace

TEST_CASE("settings: accepts uid and gid, rejects the rest with key paths", "[settings]") {
  CHECK(landlock::validate_settings(table(R"({"uid": 1000, "gid": 1000})")).empty());
  auto unknown = landlock::validate_settings(table(R"({"uidd": 5})"));
  REQUIRE(unknown.size() == 1);
  CHECK(unknown[0].code() == "CRD2015");
  CHECK(unknown[0].message() == "unknown setting 'backends.landlock.uidd' (did you mean 'uid'?)");
  auto zero = landlock::validate_settings(table(R"({"uid": 0})"));
  REQUIRE(zero.size() == 1);
  CHECK(zero[0].message().find("'backends.landlock.uid' must not be 0") == 0);
  auto text = landlock::validate_settings(table(R"({"gid": "staff"})"));
  REQUIRE(text.size() == 1);
  CHECK(text[0].message() == "'backends.landlock.gid' must be an integer");
  CHECK(landlock::validate_settings(table(R"({"uid": -3})")).size() == 1);
  CHECK(landlock::validate_settings(table(R"({"uid": 4294967295})")).size() == 1);
  auto s = parse_settings(table(R"({"uid": 1234})"));
  CHECK(s.uid == 1234u);
  CHECK_FALSE(s.gid);
}

TEST_CASE("idmap: an unprivileged caller maps itself", "[identity]") {
  IdentityInput in{1000, 1000, 0, 0, {}, nullptr};
  auto id = choose_identity(in);
  CHECK(id.uid == 1000);
  CHECK(id.gid == 1000);
  CHECK_FALSE(id.parent_writes_maps);
  CHECK(id.uid_map() == "1000 1000 1\n");
}

TEST_CASE("idmap: root never maps the sandbox to root", "[identity]") {
  auto primary = [](uid_t uid) -> std::optional<gid_t> {
    if (uid == 1000) return 100;
    return std::nullopt;
  };
  SECTION("workspace owned by a user: that user, with its primary group") {
    auto id = choose_identity({0, 0, 1000, 1000, {}, primary});
    CHECK(id.uid == 1000);
    CHECK(id.gid == 100);
    CHECK(id.parent_writes_maps);
  }
  SECTION("workspace owned by root: nobody") {
    auto id = choose_identity({0, 0, 0, 0, {}, primary});
    CHECK(id.uid == kNobody);
    CHECK(id.gid == kNobody);
  }
  SECTION("a configured uid wins; gid falls back to 65534, never 0") {
    Settings s;
    s.uid = 4242;
    auto id = choose_identity({0, 0, 1000, 0, s, primary});
    CHECK(id.uid == 4242);
    CHECK(id.gid == kNobody);
  }
  SECTION("workspace of a user without passwd entry: its group, unless root's") {
    CHECK(choose_identity({0, 0, 2000, 2000, {}, primary}).gid == 2000);
    CHECK(choose_identity({0, 0, 2000, 0, {}, primary}).gid == kNobody);
  }
}

TEST_CASE("cgroups: swap is in use only when /proc/swaps lists an area", "[limits]") {
  const std::string header = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n";
  CHECK_FALSE(sdk::lists_swap(""));
  CHECK_FALSE(sdk::lists_swap(header));
  CHECK(sdk::lists_swap(header +
                        "/dev/vda2                               partition\t1048572\t\t0\t\t-2\n"));
  CHECK(sdk::lists_swap(header + "/swapfile file 524284 0 -3\n"));
}

TEST_CASE("limits: totals only where a mechanism makes them totals", "[limits]") {
  Limits l;
  l.memory_mb = 512;
  l.max_processes = 16;
  l.max_open_files = 64;
  l.cpu_seconds = 10;
  l.cpu_percent = 50;
  l.max_file_size_mb = 8;
  auto find = [](const LimitsPlan& p, int resource) -> const RlimitSpec* {
    for (const auto& r : p.rlimits)
      if (r.resource == resource) return &r;
    return nullptr;
  };
  SECTION("no cgroup, no per-namespace count: no memory, processes or share") {
    auto p = plan_limits(l, {});
    CHECK(p.cgroup.empty());
    CHECK_FALSE(find(p, RLIMIT_NPROC));
    REQUIRE(find(p, RLIMIT_NOFILE));
    CHECK(find(p, RLIMIT_NOFILE)->soft == 64);
    CHECK(find(p, RLIMIT_FSIZE)->hard == 8u << 20);
    CHECK(find(p, RLIMIT_CPU)->soft == 10);
    CHECK(find(p, RLIMIT_CORE)->hard == 0);
  }
  SECTION("RLIMIT_NPROC inside the user namespace, counting pid 1 where it shares the uid") {
    auto p = plan_limits(l, {{}, true, true});
    REQUIRE(find(p, RLIMIT_NPROC));
    CHECK(find(p, RLIMIT_NPROC)->soft == 17);
    p = plan_limits(l, {{}, true, false});
    REQUIRE(find(p, RLIMIT_NPROC));
    CHECK(find(p, RLIMIT_NPROC)->soft == 16);
  }
  SECTION("cgroup v1 with memory, pids and cpu") {
    sdk::CgroupSupport cg;
    cg.version = sdk::CgroupVersion::v1;
    cg.memory = cg.pids = cg.cpu = true;
    auto p = plan_limits(l, {cg, false});
    CHECK(p.cgroup.memory_bytes == 512ull << 20);
    CHECK(p.cgroup.max_tasks == 16u);
    CHECK(p.cgroup.cpu_percent == 50u);
    CHECK(p.mechanisms.size() == 6);
  }
}

TEST_CASE("host_paths: a search path's directories are followed to their real ones, each once",
          "[paths]") {
  test::TempDir dir("cordon-ll-dirs-");
  const std::string real = dir / "real", alias = dir / "alias";
  REQUIRE(std::filesystem::create_directory(real));
  REQUIRE(::symlink("real", alias.c_str()) == 0);
  test::write_file(real + "/tool", "#!/bin/sh\nexit 0\n", 0755);
  auto dirs = search_dirs(alias + ":relative:" + real + ":/nonexistent:" + alias);
  CHECK(dirs == std::vector<std::string>{real});
  // Found once, through either spelling, as the file it is.
  CHECK(resolve_program("tool", dirs) == std::vector<std::string>{real + "/tool"});
  CHECK(resolve_program("tool", alias) == std::vector<std::string>{real + "/tool"});
  CHECK(resolve_program("other", dirs).empty());
}

TEST_CASE("host_paths: programs resolve through PATH and symlinks", "[paths]") {
  test::TempDir dir("cordon-ll-bin-");
  test::write_file(dir / "tool", "#!/bin/sh\nexit 0\n", 0755);
  REQUIRE(::symlink("tool", (dir / "alias").c_str()) == 0);
  auto found = resolve_program("alias", "/nonexistent:" + dir.path().string());
  REQUIRE(found.size() == 1);
  CHECK(found[0] == dir / "tool");
  CHECK(resolve_program("missing-program-xyz", dir.path().string()).empty());
  CHECK(interpreter_of(dir / "tool") == "/bin/sh");
  auto interp = interpreter_of("/bin/sh");
  CHECK(interp.find("ld-linux") != std::string::npos);
}

TEST_CASE("probe: verdicts follow the facts, with the reason when unavailable", "[probe]") {
  ProbeFacts f;
  f.abi = 7;
  f.namespaces = f.fresh_proc = f.identity = f.landlock = f.seccomp = true;
  f.netns = true;
  f.netns_evidence = "netns";
  f.cgroups.evidence = "no cgroup v1 memory or pids group can be created by uid 1000";
  SECTION("no cgroup: totals unproven, with evidence; processes by RLIMIT_NPROC when counted") {
    auto r = probe_result(f);
    CHECK(r.available);
    CHECK(r.proves(cap::fs_read_block));
    CHECK_FALSE(r.proves(cap::limit_memory));
    CHECK(r.evidence(cap::limit_memory).find("uid 1000") != std::string::npos);
    CHECK_FALSE(r.proves(cap::limit_processes));
    CHECK_FALSE(r.proves(cap::limit_cpu_share));
    f.nproc_per_userns = true;
    CHECK(probe_result(f).proves(cap::limit_processes));
  }
  SECTION("an old ABI: no TCP ports, no scopes, ipc via the network namespace only") {
    f.abi = 3;
    auto r = probe_result(f);
    CHECK_FALSE(r.proves(cap::net_ports));
    CHECK(r.evidence(cap::net_ports) == "TCP port rules need Landlock ABI 4; this kernel has 3");
    CHECK(r.proves(cap::ipc_isolate));
    f.netns = false;
    CHECK_FALSE(probe_result(f).proves(cap::ipc_isolate));
  }
  SECTION("unavailable: the reason, and nothing proven") {
    f.failure =
        "unprivileged user namespaces disabled by kernel.apparmor_restrict_unprivileged_userns";
    auto r = probe_result(f);
    CHECK_FALSE(r.available);
    CHECK(r.reason == f.failure);
    CHECK_FALSE(r.proves(cap::env_grant));
    f.failure.clear();
    f.abi = -EOPNOTSUPP;
    CHECK(probe_result(f).reason == "Landlock is disabled at boot (lsm= does not list landlock)");
    f.abi = 7;
    f.seccomp = false;
    CHECK(probe_result(f).reason == "the seccomp filter did not deny unshare");
  }
}
