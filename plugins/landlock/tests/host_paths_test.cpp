// The host view's path resolution: canonical forms with and without symlinks on the way.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

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
  // "missing/.." does not exist on the host: the kernel refuses it, as the fallback does.
  CHECK(v.read.size() == 2);
  CHECK(std::any_of(v.notes.begin(), v.notes.end(), [](const std::string& n) {
    return n.find("real/missing/../sub' does not exist") != std::string::npos;
  }));
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
