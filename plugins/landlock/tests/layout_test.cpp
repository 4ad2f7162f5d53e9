// Pure planning of the sandbox's tree and rights: the layout (binds, tmpfs, HOME, masks and
// their pins) and the Landlock ruleset that follows it. No system calls. (plan_test.cpp: the
// settings, the identity, the limits, the search paths and the probe's verdicts.)
#include <algorithm>

#include "host_paths.hpp"
#include "layout.hpp"
#include "ruleset.hpp"
#include "support.hpp"

using namespace cordon;
using namespace cordon::landlock;

namespace {

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
