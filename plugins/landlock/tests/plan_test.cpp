// Pure planning: settings, identity, layout, ruleset, limits, candidates. No system calls.
#include <cordon/sdk/capabilities.hpp>

#include <boost/json/parse.hpp>

#include "host_paths.hpp"
#include "idmap.hpp"
#include "layout.hpp"
#include "limits.hpp"
#include "probe.hpp"
#include "ruleset.hpp"
#include "settings.hpp"
#include "spawn.hpp"
#include "support.hpp"

using namespace cordon;
using namespace cordon::landlock;

namespace {

boost::json::object table(const char* json) { return boost::json::parse(json).as_object(); }

HostView confined_view() {
  HostView v;
  v.workspace = {"/home/u/proj", true};
  v.workspace_writable = true;  // the policy grants {workspace}, as every preset does
  v.home = "/home/u";
  v.home_exists = true;
  v.read = {{"/usr", true}, {"/etc", true}};
  v.links = {{"/bin", "usr/bin"}, {"/lib64", "usr/lib64"}};
  v.blocked = {{"/etc/shadow", false}, {"/home/u/.ssh", true}, {"/srv/secret", true}};
  v.blocked_exec = {{"/usr/bin/su", false}};
  return v;
}

const MountStep* step_at(const Layout& l, const std::string& target) {
  for (const auto& s : l.steps)
    if (s.target == target) return &s;
  return nullptr;
}

bool has(const std::vector<Mask>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), Mask{x, false, 0, 0}) != v.end();
}

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

TEST_CASE("layout: confined reads bind only the granted paths", "[layout]") {
  auto l = plan_layout(confined_view(), {});
  CHECK_FALSE(l.read_host);
  CHECK(l.private_tmp);
  REQUIRE(step_at(l, "/usr"));
  CHECK_FALSE(step_at(l, "/usr")->writable);
  CHECK(step_at(l, "/usr")->create_target);
  REQUIRE(step_at(l, "/home/u/proj"));
  CHECK(step_at(l, "/home/u/proj")->writable);
  CHECK_FALSE(step_at(l, "/srv"));
  // HOME replaces the host's home on the root tmpfs; the workspace is bound inside it.
  CHECK(l.home == "/home/u");
  CHECK(l.home_kind == HomeKind::root_dir);
  // Masks only where something is visible: /etc/shadow and su, not ~/.ssh or /srv/secret.
  CHECK(has(l.masks, "/etc/shadow"));
  CHECK(has(l.masks, "/usr/bin/su"));
  CHECK_FALSE(has(l.masks, "/home/u/.ssh"));
  CHECK_FALSE(has(l.masks, "/srv/secret"));
  // The policy's spellings through symlinks keep working.
  CHECK(std::find(l.symlinks.begin(), l.symlinks.end(),
                  std::pair<std::string, std::string>{"/bin", "usr/bin"}) != l.symlinks.end());
}

TEST_CASE("layout: read = host binds every top-level entry and hides the host's home", "[layout]") {
  HostView v = confined_view();
  v.read_host = true;
  v.read.clear();
  v.root_entries = {{"bin", RootEntry::Kind::symlink, "usr/bin"},
                    {"dev", RootEntry::Kind::dir, ""},
                    {"etc", RootEntry::Kind::dir, ""},
                    {"home", RootEntry::Kind::dir, ""},
                    {"proc", RootEntry::Kind::dir, ""},
                    {"run", RootEntry::Kind::dir, ""},
                    {"srv", RootEntry::Kind::dir, ""},
                    {"tmp", RootEntry::Kind::dir, ""},
                    {"usr", RootEntry::Kind::dir, ""}};
  auto l = plan_layout(v, {});
  CHECK(l.read_host);
  CHECK(step_at(l, "/srv"));
  CHECK_FALSE(step_at(l, "/proc"));
  CHECK_FALSE(step_at(l, "/dev"));
  CHECK_FALSE(step_at(l, "/tmp"));
  CHECK_FALSE(step_at(l, "/run"));  // the host's live sockets, not files to read
  CHECK(l.private_tmp);
  REQUIRE(step_at(l, "/home/u"));
  CHECK(step_at(l, "/home/u")->kind == MountStep::Kind::home_tmpfs);
  CHECK(l.home_kind == HomeKind::tmpfs);
  REQUIRE(step_at(l, "/home/u/proj"));
  CHECK(step_at(l, "/home/u/proj")->create_target);   // inside the home tmpfs
  CHECK_FALSE(step_at(l, "/home/u")->create_target);  // beneath the /home bind
  CHECK(has(l.masks, "/srv/secret"));
  CHECK(has(l.masks, "/etc/shadow"));
  CHECK_FALSE(has(l.masks, "/home/u/.ssh"));  // hidden by the private home already
}

TEST_CASE("layout: redundant binds go, a writable child of a read-only one stays", "[layout]") {
  HostView v = confined_view();
  v.read.push_back({"/home", true});
  v.read.push_back({"/usr/share", true});
  v.write.push_back({"/usr/local", true});
  auto l = plan_layout(v, {});
  CHECK_FALSE(step_at(l, "/usr/share"));
  REQUIRE(step_at(l, "/usr/local"));
  CHECK(step_at(l, "/usr/local")->writable);
  CHECK_FALSE(step_at(l, "/usr/local")->create_target);
  // The home under a bind becomes a tmpfs; the workspace is bound again inside it.
  CHECK(l.home_kind == HomeKind::tmpfs);
  CHECK(step_at(l, "/home/u/proj"));
}

TEST_CASE("layout: the tmpfs mounts share the budget they are given", "[layout]") {
  LayoutOptions options;
  options.tmpfs_bytes = 64ull << 20;
  // HOME on the root tmpfs: the root's tmpfs holds the whole budget.
  auto root_home = plan_layout(confined_view(), options);
  REQUIRE(root_home.home_kind == HomeKind::root_dir);
  CHECK(root_home.tmpfs_bytes == 64ull << 20);
  // HOME on its own tmpfs: each holds half, so that both full still fit in the budget.
  HostView v = confined_view();
  v.read.push_back({"/home", true});
  auto own_home = plan_layout(v, options);
  REQUIRE(own_home.home_kind == HomeKind::tmpfs);
  CHECK(own_home.tmpfs_bytes == 32ull << 20);
  CHECK(plan_layout(v, {}).tmpfs_bytes == 0);  // no budget: the kernel's default
}

TEST_CASE("layout: HOME falls back when the home itself is granted", "[layout]") {
  HostView v = confined_view();
  v.workspace = {"/home/u", true};
  auto l = plan_layout(v, {});
  CHECK(l.home == kFallbackHome);
  LayoutOptions host_home;
  host_home.home_private = false;
  CHECK(plan_layout(v, host_home).home_kind == HomeKind::host);
}

TEST_CASE("layout: with read = host, a path under /run is there only when written", "[layout]") {
  HostView v = confined_view();
  v.read_host = true;
  v.read.clear();
  v.root_entries = {{"run", RootEntry::Kind::dir, ""}, {"usr", RootEntry::Kind::dir, ""}};
  CHECK_FALSE(step_at(plan_layout(v, {}), "/run"));
  v.write.push_back({"/run/app", true});
  auto l = plan_layout(v, {});
  CHECK_FALSE(step_at(l, "/run"));
  REQUIRE(step_at(l, "/run/app"));
  CHECK(step_at(l, "/run/app")->writable);
  // The resolver file host_paths grants there (network allowed) is a read-only file bind.
  v.read.push_back({"/run/systemd/resolve/stub-resolv.conf", false});
  l = plan_layout(v, {});
  const auto* resolver = step_at(l, "/run/systemd/resolve/stub-resolv.conf");
  REQUIRE(resolver);
  CHECK_FALSE(resolver->writable);
  CHECK_FALSE(resolver->dir);
  CHECK(resolver->create_target);
}

TEST_CASE("layout: writing the host's /tmp turns the private /tmp off", "[layout]") {
  HostView v = confined_view();
  v.write.push_back({"/tmp", true});
  auto l = plan_layout(v, {});
  CHECK_FALSE(l.private_tmp);
  REQUIRE(step_at(l, "/tmp"));
  CHECK(step_at(l, "/tmp")->writable);
}

TEST_CASE("ruleset: rights follow the layout and the ABI", "[landlock]") {
  auto v = confined_view();
  auto l = plan_layout(v, {});
  Network deny;
  auto plan = plan_ruleset(7, v, l, deny, false);
  CHECK(plan.handled_fs == handled_fs_rights(7));
  CHECK(plan.handled_net == 0);
  CHECK(plan.scoped == (right::scope_abstract_unix | right::scope_signal));
  auto rule = [](const std::vector<PathRule>& rules, const std::string& path) {
    for (const auto& r : rules)
      if (r.path == path) return r.access;
    return std::uint64_t{0};
  };
  CHECK(rule(plan.host, "/usr") == (right::read_file | right::read_dir | right::execute));
  CHECK((rule(plan.host, "/home/u/proj") & right::write_file));
  CHECK((rule(plan.host, "/dev/null") & ~right::file_only) == 0);
  CHECK(rule(plan.sandbox, "/") == right::read_dir);
  CHECK((rule(plan.sandbox, "/tmp") & right::make_reg));
  CHECK((rule(plan.sandbox, "/proc") & right::write_file) == 0);
  SECTION("exec confined: no EXECUTE but on the allowed files") {
    v.allowed_exec = {"/usr/bin/cat"};
    auto confined = plan_ruleset(7, v, l, deny, true);
    CHECK((rule(confined.host, "/usr") & right::execute) == 0);
    CHECK(rule(confined.host, "/usr/bin/cat") == (right::execute | right::read_file));
  }
  SECTION("TCP ports need ABI 4") {
    Network ports;
    ports.connect_ports = {443};
    ports.bind_ports = {443, 8080};
    auto p = plan_ruleset(4, v, l, ports, false);
    CHECK(p.handled_net == (right::net_bind_tcp | right::net_connect_tcp));
    CHECK(p.scoped == 0);
    REQUIRE(p.ports.size() == 2);
    CHECK(p.ports[0] == std::pair<std::uint16_t, std::uint64_t>{
                            443, right::net_connect_tcp | right::net_bind_tcp});
    CHECK_THROWS_AS(plan_ruleset(3, v, l, ports, false), Error);
  }
  CHECK(handled_fs_rights(1) == 0x1fff);
  CHECK(handled_fs_rights(3) == 0x7fff);
  CHECK(handled_fs_rights(5) == 0xffff);
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

TEST_CASE("layout: a mask's directories inside a writable bind are pinned, parents first",
          "[layout]") {
  HostView v = confined_view();
  v.blocked = {{"/home/u/proj/conf/secret.key", false, 1, 2},
               {"/home/u/proj/conf/secret.key", false, 1, 2},
               {"/etc/shadow", false, 1, 3},
               {"/home/u/proj/keys", true, 1, 4},
               {"/home/u/proj/keys/inner", false, 1, 5}};
  auto l = plan_layout(v, {});
  // Masks carry the identity found on the host; one beneath another is dropped.
  REQUIRE(has(l.masks, "/home/u/proj/conf/secret.key"));
  CHECK(l.masks[0].dev == 1);
  CHECK(l.masks[0].ino == 2);
  CHECK(has(l.masks, "/home/u/proj/keys"));
  CHECK_FALSE(has(l.masks, "/home/u/proj/keys/inner"));
  // conf lies in the writable workspace: pinned. /etc is a read-only bind: nothing to pin, and
  // the workspace is a bind target already.
  CHECK(l.pins == std::vector<std::string>{"/home/u/proj/conf"});
  v.blocked = {{"/home/u/proj/a/b/c", false, 1, 6}};
  CHECK(plan_layout(v, {}).pins == std::vector<std::string>{"/home/u/proj/a", "/home/u/proj/a/b"});
}

TEST_CASE("layout: cordon's own state and other mounts of a blocked object are masked too",
          "[layout]") {
  HostView v = confined_view();
  v.read.push_back({"/srv", true});
  v.own_state = {{"/usr/lib/cordon/plugins", true, 1, 7}, {"/var/lib/cordon", true, 1, 8}};
  v.aliases = {{"/srv/alias/secret", false, 1, 9}};
  auto l = plan_layout(v, {});
  CHECK(has(l.masks, "/usr/lib/cordon/plugins"));
  CHECK_FALSE(has(l.masks, "/var/lib/cordon"));  // not in the tree at all
  CHECK(has(l.masks, "/srv/alias/secret"));
  CHECK(has(l.masks, "/srv/secret"));
  CHECK(l.pins.empty());  // read-only binds: nothing there can be renamed
}
