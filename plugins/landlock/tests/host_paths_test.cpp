// The host view's path resolution: canonical forms with and without symlinks on the way.
#include <elf.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "applet_cache.hpp"
#include "host_masks.hpp"
#include "host_paths.hpp"
#include "support.hpp"

using namespace cordon;
using namespace cordon::landlock;
using cordon::landlock::test::TempDir;

namespace {

bool holds(const std::vector<HostPath>& paths, const std::string& path, bool dir) {
  return std::find(paths.begin(), paths.end(), HostPath{path, dir}) != paths.end();
}

}  // namespace

TEST_CASE("host paths: spellings of a path without symlinks resolve to one canonical path",
          "[host_paths]") {
  TempDir t("cordon-hp-", ::getuid());
  std::string root = std::filesystem::canonical(t.path()).string();
  std::filesystem::create_directories(root + "/real/sub");
  std::filesystem::create_directories(root + "/real/other");
  test::write_file(root + "/real/file", "x");
  Policy p = test::base_policy(root, "/nonexistent-home");
  p.filesystem.read = {root + "/real/other/../sub/", root + "//real//sub", root + "/real/file",
                       root + "/real/missing/../sub"};
  HostView v = gather_host_view(test::make_plan(p, root, {"/bin/true"}));
  CHECK(holds(v.read, root + "/real/sub", true));
  CHECK(holds(v.read, root + "/real/file", false));
  // "missing/.." is read lexically, as the core's resolve_paths writes every policy path.
  CHECK(v.read.size() == 2);
  CHECK(v.notes.empty());
  CHECK(v.links.empty());
}

TEST_CASE("host paths: a path through a symlink resolves to its target, and the link is kept",
          "[host_paths]") {
  TempDir t("cordon-hp-", ::getuid());
  std::string root = std::filesystem::canonical(t.path()).string();
  std::filesystem::create_directories(root + "/real/sub");
  std::filesystem::create_directory_symlink("real", root + "/link");
  // The workspace is writable: a symlink inside it would be refused as planted.
  TempDir ws("cordon-hp-ws-", ::getuid());
  Policy p = test::base_policy(ws.path().string(), "/nonexistent-home");
  p.filesystem.read = {root + "/link/sub"};
  p.filesystem.blocked = {root + "/link/sub/"};
  HostView v = gather_host_view(test::make_plan(p, ws.path().string(), {"/bin/true"}));
  CHECK(v.read == std::vector<HostPath>{{root + "/real/sub", true}});
  CHECK(v.blocked == std::vector<HostPath>{{root + "/real/sub", true}});
  CHECK(std::find(v.links.begin(), v.links.end(),
                  std::make_pair(root + "/link", std::string("real"))) != v.links.end());
}

TEST_CASE("host paths: the resolver file is granted where the policy would hide it",
          "[host_paths]") {
  // read = "host" hides /run, where systemd-resolved keeps the file /etc/resolv.conf links to.
  // The root and unprivileged runs share /run/cordon-escape (run-escape.sh makes it).
  const std::string shared = "/run/cordon-escape";
  if (test::is_root() && ::mkdir(shared.c_str(), 01777) == 0) ::chmod(shared.c_str(), 01777);
  if (!test::needs(::access(shared.c_str(), W_OK | X_OK) == 0,
                   "a writable /run/cordon-escape (run-escape.sh makes it)"))
    return;
  TempDir run("resolver-", ::getuid(), shared);
  TempDir etc("cordon-hp-", ::getuid());
  std::string linked = std::filesystem::canonical(run.path()).string() + "/linked-resolv.conf";
  test::write_file(linked, "nameserver 127.0.0.53\n");
  std::string dir = std::filesystem::canonical(etc.path()).string();
  std::string conf = dir + "/resolv.conf", local = dir + "/local.conf";
  REQUIRE(::symlink(linked.c_str(), conf.c_str()) == 0);
  test::write_file(dir + "/real.conf", "nameserver 192.0.2.1\n");
  REQUIRE(::symlink((dir + "/real.conf").c_str(), local.c_str()) == 0);

  auto hidden = resolver_file(conf, true, {});
  REQUIRE(hidden);
  CHECK(*hidden == HostPath{linked, false});
  // A target that read = "host" shows anyway needs nothing.
  CHECK_FALSE(resolver_file(local, true, {}));
  // Confined reads: granted only when the link's directory is readable, outside the read set.
  CHECK_FALSE(resolver_file(conf, false, {}));
  CHECK(resolver_file(conf, false, {{dir, true}}) == HostPath{linked, false});
  CHECK(resolver_file(local, false, {{dir, true}}) == HostPath{dir + "/real.conf", false});
  // A plain file needs nothing.
  CHECK_FALSE(resolver_file(dir + "/real.conf", false, {{dir, true}}));
}

TEST_CASE("host masks: mountinfo lines give each mount's file system, root and place",
          "[host_paths]") {
  auto mounts = parse_mountinfo(
      "26 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
      "40 26 254:0 /srv/data /mnt/alias rw,relatime shared:1 - ext4 /dev/vda rw\n"
      "41 26 254:0 /srv/da\\040ta /mnt/sp\\040ace rw - ext4 /dev/vda rw\n"
      "garbage line\n"
      "42 26 0:24 / /tmp rw - tmpfs tmpfs rw\n");
  REQUIRE(mounts.size() == 4);
  CHECK(mounts[1].root == "/srv/data");
  CHECK(mounts[1].point == "/mnt/alias");
  CHECK(mounts[2].root == "/srv/da ta");
  CHECK(mounts[2].point == "/mnt/sp ace");
  CHECK(mounts[0].dev == makedev(254, 0));
  CHECK(mounts[3].dev == makedev(0, 24));
}

TEST_CASE("host masks: the other mounts that show a blocked object are its aliases",
          "[host_paths]") {
  auto mounts = parse_mountinfo(
      "26 1 254:0 / / rw - ext4 /dev/vda rw\n"
      "40 26 254:0 /srv/data /mnt/alias rw - ext4 /dev/vda rw\n"
      "41 26 254:0 /srv /mnt/whole rw - ext4 /dev/vda rw\n"
      "42 26 254:0 /home /mnt/home rw - ext4 /dev/vda rw\n"
      "43 26 0:24 /srv/data /mnt/other-fs rw - tmpfs tmpfs rw\n");
  auto aliases = alias_paths(mounts, makedev(254, 0), "/srv/data/secret.txt");
  CHECK(aliases == std::vector<std::string>{"/mnt/alias/secret.txt", "/mnt/whole/data/secret.txt"});
  // Seen from inside a bind: the object's path in its file system is what counts.
  CHECK(alias_paths(mounts, makedev(254, 0), "/mnt/alias/secret.txt") ==
        std::vector<std::string>{"/srv/data/secret.txt", "/mnt/whole/data/secret.txt"});
  CHECK(alias_paths(mounts, makedev(9, 9), "/srv/data/secret.txt").empty());
}

TEST_CASE("host masks: busybox's applet table is read from its program file", "[host_paths]") {
  std::string blob("junk\0\0[\0[[\0ash\0su\0unshare\0\0more", 31);
  CHECK(applet_table(blob) == std::vector<std::string>{"[", "[[", "ash", "su", "unshare"});
  CHECK(applet_table("no table here").empty());
  // The host's own busybox, when it has one: it lists the applets `busybox --list` prints.
  for (const char* bb : {"/bin/busybox", "/usr/bin/busybox"}) {
    if (::access(bb, X_OK) != 0) continue;
    auto applets = busybox_applets(bb);
    CHECK(applets.size() > 50);
    CHECK(std::find(applets.begin(), applets.end(), "sh") != applets.end());
    break;
  }
  CHECK(busybox_applets("/bin/true").empty());
}

TEST_CASE("host masks: missing state of cordon's refuses only where the command could make it",
          "[host_paths]") {
  TempDir ws_dir("cordon-hp-ws-", ::getuid()), other("cordon-hp-", ::getuid());
  std::string ws = std::filesystem::canonical(ws_dir.path()).string();
  std::string ro = std::filesystem::canonical(other.path()).string();
  std::filesystem::create_directories(ws + "/dir");
  std::filesystem::create_directory_symlink(ro, ws + "/away");
  auto gather = [&](const std::string& state) {
    Plan plan = test::make_plan(test::base_policy(ws, "/nonexistent-home"), ws, {"/bin/true"});
    plan.protected_paths = {state};
    return gather_host_view(plan);
  };
  auto refusal = [&](const std::string& state) -> std::string {
    try {
      gather(state);
    } catch (const Error& e) {
      return e.code() + " " + e.message();
    }
    return "";
  };
  // Inside the write grant, with no symlink on the way, however deep it is missing.
  for (const auto& state : {ws + "/cordon", ws + "/dir/a/b/cordon", ws + "/missing/cordon"}) {
    INFO(state);
    std::string why = refusal(state);
    CHECK(why.rfind("CRD1003 ", 0) == 0);
    CHECK(why.find("could create it") != std::string::npos);
  }
  // Outside it: nothing to mask, and the run goes on.
  for (const auto& state : {ro + "/cordon", ro + "/a/b/cordon"}) {
    INFO(state);
    CHECK(refusal(state).empty());
    CHECK(gather(state).own_state.empty());
  }
  // Through a symlink outside the write grant that leads into it: where it would be made counts.
  std::filesystem::create_directory_symlink(ws + "/dir", ro + "/to-ws");
  CHECK(refusal(ro + "/to-ws/cordon").find("could create it") != std::string::npos);
  // Through a symlink in the workspace: refused as a planted link, before anything is made.
  std::string why = refusal(ws + "/away/cordon");
  CHECK(why.rfind("CRD1003 ", 0) == 0);
  CHECK(why.find("passes through the symlink") != std::string::npos);
}

TEST_CASE("host masks: what the command's user cannot reach needs no mask", "[host_paths]") {
  TempDir t("cordon-hp-", ::getuid());
  std::string dir = std::filesystem::canonical(t.path()).string() + "/private";
  std::filesystem::create_directories(dir + "/inner");
  REQUIRE(::chmod(dir.c_str(), 0700) == 0);
  const uid_t stranger = 54321;
  CHECK_FALSE(reachable_by(dir + "/inner/secret", stranger, {}));
  CHECK(reachable_by(dir + "/inner/secret", ::getuid(), {}));  // its owner can always open it up
  REQUIRE(::chmod(dir.c_str(), 0710) == 0);
  CHECK_FALSE(reachable_by(dir + "/inner/secret", stranger, {}));
  CHECK(reachable_by(dir + "/inner/secret", stranger, {::getgid()}));  // a member of its group
  REQUIRE(::chmod(dir.c_str(), 0711) == 0);
  CHECK(reachable_by(dir + "/inner/secret", stranger, {}));
}

TEST_CASE("host masks: busybox's applets are kept by the program's identity", "[host_paths]") {
  TempDir t("cordon-hp-", ::getuid());
  std::string root = std::filesystem::canonical(t.path()).string();
  std::string state = root + "/state", prog = root + "/busybox";
  // A program file with an ELF header naming a .rodata that holds an applet table.
  auto make_program = [&](const std::string& applets) {
    std::string rodata = std::string("x\0[\0[[\0", 7) + applets + std::string("\0\0", 2);
    Elf64_Ehdr eh{};
    std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
    eh.e_ident[EI_CLASS] = ELFCLASS64;
    eh.e_shentsize = sizeof(Elf64_Shdr);
    eh.e_shnum = 2;
    eh.e_shstrndx = 1;
    std::string names = std::string("\0.rodata\0.shstrtab\0", 19);
    Elf64_Shdr sh[2]{};
    eh.e_shoff = sizeof eh;
    std::size_t data_at = sizeof eh + sizeof sh;
    sh[0].sh_name = 1;
    sh[0].sh_offset = data_at;
    sh[0].sh_size = rodata.size();
    sh[1].sh_name = 9;
    sh[1].sh_offset = data_at + rodata.size();
    sh[1].sh_size = names.size();
    std::string bytes(reinterpret_cast<const char*>(&eh), sizeof eh);
    bytes.append(reinterpret_cast<const char*>(sh), sizeof sh);
    test::write_file(prog, bytes + rodata + names, 0755);
  };
  make_program(std::string("su\0true", 7));
  auto lookup = cached_applets(state);
  CHECK(lookup(prog) == std::vector<std::string>{"[", "[[", "su", "true"});
  // The second lookup reads the cache: a cache entry for this identity says what it holds.
  auto entries = std::filesystem::directory_iterator(state);
  REQUIRE(entries != std::filesystem::directory_iterator());
  auto entry = entries->path();
  CHECK(test::read_file(entry).rfind(applet_key(prog) + "\n", 0) == 0);
  test::write_file(entry, applet_key(prog) + "\n[\ncached\n", 0600);
  CHECK(cached_applets(state)(prog) == std::vector<std::string>{"[", "cached"});
  // The same lookup remembers what it read, without reading the cache again.
  CHECK(lookup(prog) == std::vector<std::string>{"[", "[[", "su", "true"});
  // A rewritten program has another identity: it is read again.
  ::usleep(10000);
  make_program(std::string("unshare", 7));
  CHECK(lookup(prog) == std::vector<std::string>{"[", "[[", "unshare"});
  // Without a state directory nothing is kept.
  CHECK(cached_applets({})(prog) == std::vector<std::string>{"[", "[[", "unshare"});
}
