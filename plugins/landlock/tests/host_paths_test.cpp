// The host view's path resolution: canonical forms with and without symlinks on the way.
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
