// Blocked programs that reach the container through a host mount, and the private tmpfs that
// must not hide a granted mount: the resolution through the mounts (units on a real host tree)
// and runs against the real daemon, both ways.
#include <cordon/sdk/capabilities.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "container_spec.hpp"
#include "mounted_programs.hpp"
#include "report.hpp"
#include "support.hpp"

using namespace cordon;
using namespace cordon::docker;
using namespace cordon::docker::test;

namespace fs = std::filesystem;

namespace {

/// An executable shell script that prints `word`.
void make_script(const std::string& path, const std::string& word) {
  write_file(path, "#!/bin/sh\necho " + word + "\n");
  ::chmod(path.c_str(), 0755);
}

}  // namespace

TEST_CASE("mounted_programs: candidates resolve through the mounts and their links", "[unit]") {
  TempDir ws, tools("cordon-dk-tools-");
  make_script(tools / "blocked-prog", "blocked");
  make_script(tools / "allowed-prog", "allowed");
  fs::create_directory(ws.path() / "bin");
  // An absolute link is the container's path: the tools are mounted at /opt/tools.
  fs::create_symlink("/opt/tools/blocked-prog", ws.path() / "bin/blocked-prog");
  fs::create_symlink("./bin/../bin", ws.path() / "via");
  fs::create_symlink("/bin/busybox", ws.path() / "bin/sudo");
  fs::create_symlink("/usr/bin/su", ws.path() / "bin/su");
  std::vector<HostMount> mounts{{ws.path().string(), ws.path().string(), true, "workspace"},
                                {tools.path().string(), "/opt/tools", false, "mounts"}};

  auto r = resolve_in_container(ws / "via/blocked-prog", mounts);
  CHECK(r.where == ContainerPath::Where::mount);
  CHECK(r.path == "/opt/tools/blocked-prog");
  CHECK(r.host == tools / "blocked-prog");
  CHECK(resolve_in_container("/usr/bin/env", mounts).where == ContainerPath::Where::image);
  CHECK_FALSE(resolve_in_container("/usr/bin/env", mounts).via_mount);
  CHECK(resolve_in_container(ws / "bin/nothing", mounts).where == ContainerPath::Where::missing);

  // Both ways: the blocked name is masked where the link leads; its sibling is not.
  auto found =
      mounted_programs(exec_candidates({"blocked-prog"}, ws / "bin" + ":/opt/tools"), mounts);
  CHECK(found.masks == std::vector<std::string>{"/opt/tools/blocked-prog"});
  CHECK(found.image_links.empty());
  // A link to the image's file of the same name is handed to the image's stat.
  auto su = mounted_programs(exec_candidates({"su"}, ws / "bin"), mounts);
  CHECK(su.masks.empty());
  CHECK(su.image_links == std::vector<std::string>{"/usr/bin/su"});
  // A link to a program of another name: refused unless that program is a multi-call one that
  // provides the name (masked in the image, so the link reaches its mask).
  auto sudo = mounted_programs(exec_candidates({"sudo"}, ws / "bin"), mounts);
  REQUIRE(sudo.foreign_links.size() == 1);
  CHECK(sudo.foreign_links[0] ==
        std::pair<std::string, std::string>{ws / "bin/sudo", "/bin/busybox"});
  try {
    check_foreign_links(sudo, ExecMasks{});
    FAIL("a link to another program was accepted");
  } catch (const Error& e) {
    CHECK(e.code() == "CRD1003");
    CHECK(e.message().find("'" + ws / "bin/sudo" + "'") != std::string::npos);
  }
  ExecMasks busybox;
  busybox.multicall = {"/usr/bin/busybox"};
  busybox.multicall_aliases = {"/bin/busybox"};
  CHECK_NOTHROW(check_foreign_links(sudo, busybox));
}

TEST_CASE("mounted_programs: the image's masks that a mount shadows move to the mount", "[unit]") {
  TempDir tools("cordon-dk-tools-");
  make_script(tools / "blocked-prog", "blocked");
  std::vector<HostMount> mounts{{tools.path().string(), "/usr/local/bin", false, "mounts"}};
  ExecMasks image;
  image.files = {"/usr/bin/blocked-prog", "/usr/local/bin/blocked-prog", "/usr/local/bin/gone"};
  image.dangling = {"/usr/local/bin/blocked-prog", "/opt/nowhere/x"};
  MountedPrograms mounted;
  settle_image_masks(mounts, image, mounted);
  CHECK(image.files == std::vector<std::string>{"/usr/bin/blocked-prog"});
  CHECK(mounted.masks == std::vector<std::string>{"/usr/local/bin/blocked-prog"});
}

TEST_CASE("container_spec: no private tmpfs hides a granted mount, the report says so", "[unit]") {
  Plan plan;
  plan.policy.filesystem.write = {"/ws", "/tmp"};
  plan.requirements = derive_requirements(plan.policy);
  plan.argv = {"true"};
  plan.workspace = "/ws";
  Settings s;
  s.image = "img";
  s.mounts = {{"/data", "/data/", false}};
  SpecInput in{plan, s,      "run1", "1000:1000", {}, host_mounts(plan, s, {"/tmp"}),
               {},   "/m/f", "/m/d", {},          {}, {},
               {},   {}};
  auto spec = make_spec(in);
  const auto& hc = spec.body.at("HostConfig").as_object();
  CHECK_FALSE(hc.at("Tmpfs").as_object().contains("/tmp"));
  CHECK(hc.at("Tmpfs").as_object().contains(kPrivateHome));
  CHECK_FALSE(spec.private_tmp);
  auto report = enforcement_report(plan, spec, "1000:1000", "1.41");
  auto line = std::find_if(report.begin(), report.end(), [](const Enforcement& e) {
    return e.capability == cap::fs_write_confine;
  });
  REQUIRE(line != report.end());
  CHECK(line->mechanism ==
        "read-only root; writable: /ws, /tmp, the private HOME; /tmp is the "
        "host's");
  // The other way: without the grant, /tmp is the private tmpfs.
  in.mounts = host_mounts(plan, s, {});
  auto private_tmp = make_spec(in);
  CHECK(private_tmp.body.at("HostConfig").as_object().at("Tmpfs").as_object().contains("/tmp"));
  // A mount at the private HOME would be hidden by its tmpfs: refused.
  s.mounts = {{"/data", kPrivateHome, false}};
  in.mounts = host_mounts(plan, s, {});
  try {
    make_spec(in);
    FAIL("a mount at the private HOME was accepted");
  } catch (const Error& e) {
    CHECK(e.code() == "CRD1003");
    CHECK(e.message().find("'/data'") != std::string::npos);
  }
}

TEST_CASE("container_spec: a mask at a mount's own target replaces the mount", "[unit]") {
  Plan plan;
  plan.policy.filesystem.write = {"/ws"};
  plan.argv = {"true"};
  plan.workspace = "/ws";
  Settings s;
  s.image = "img";
  s.mounts = {{"/host/tool", "/opt/tool", false}};
  SpecInput in{plan,
               s,
               "run1",
               "1000:1000",
               {},
               host_mounts(plan, s, {}),
               {},
               "/m/f",
               "/m/d",
               {},
               {"/opt/tool"},
               {"/opt/tool"},
               {},
               {}};
  auto spec = make_spec(in);
  const auto& mounts = spec.body.at("HostConfig").as_object().at("Mounts").as_array();
  REQUIRE(mounts.size() == 2);  // the workspace, and one mask at /opt/tool
  CHECK(mounts[1].as_object().at("Source") == "/m/f");
  CHECK(mounts[1].as_object().at("Target") == "/opt/tool");
  CHECK(spec.mount_exec_masked == std::vector<std::string>{"/opt/tool"});
}

TEST_CASE("exec: a blocked program on a host mount cannot run or be read, its sibling runs",
          "[docker]") {
  if (!docker_ready()) return;
  TempDir ws, tools("cordon-dk-tools-"), extra("cordon-dk-extra-");
  make_script(tools / "blocked-prog", "blocked-ran");
  make_script(tools / "allowed-prog", "allowed-ran");
  make_script(extra / "blocked-prog", "second-copy-ran");
  fs::create_directory(ws.path() / "bin");
  make_script(ws / "bin/blocked-prog", "workspace-copy-ran");
  fs::create_symlink(tools / "blocked-prog", ws.path() / "innocent");
  auto policy = base_policy(ws.path());
  policy.filesystem.write.push_back(tools.path().string());
  policy.process.blocked_commands = {"blocked-prog"};
  auto plan = make_plan(policy, ws.path(),
                        {"/bin/sh", "-c",
                         "allowed-prog; b=blocked; $b-prog 2>/dev/null || echo no-exec; "
                         "cat " +
                             tools / "blocked-prog" +
                             " 2>/dev/null || echo no-read; "
                             "./innocent 2>/dev/null || echo no-link; "
                             "/opt/more/blocked-prog 2>/dev/null || echo no-operator-mount; "
                             "bin/blocked-prog 2>/dev/null || echo no-workspace-copy; "
                             "ls /opt/more"});
  plan.env["PATH"] = tools.path().string() + ":/opt/more:" + (ws / "bin") + ":/usr/bin:/bin";
  plan.settings["mounts"] = boost::json::array{extra.path().string() + ":/opt/more:ro"};
  CaptureSink sink;
  auto r = backend().run(plan, sink);
  INFO(sink.err);
  CHECK(r.exit_code == 0);
  CHECK(sink.out ==
        "allowed-ran\nno-exec\nno-read\nno-link\nno-operator-mount\nno-workspace-copy\n"
        "blocked-prog\n");
  auto line = reported(r, cap::fs_exec_block);
  INFO(line);
  CHECK(line.find("on host mounts ") != std::string::npos);
  for (const auto& masked :
       {tools / "blocked-prog", std::string("/opt/more/blocked-prog"), ws / "bin/blocked-prog"})
    CHECK(line.find(masked) != std::string::npos);
  // The host's files are untouched, and run without the policy.
  CHECK(read_file(tools / "blocked-prog") == "#!/bin/sh\necho blocked-ran\n");
  policy.process.blocked_commands.clear();
  plan.policy = policy;
  CaptureSink open;
  auto unblocked = backend().run(plan, open);
  CHECK(unblocked.exit_code == 0);
  CHECK(open.out.rfind("allowed-ran\nblocked-ran\n#!/bin/sh\n", 0) == 0);
}

TEST_CASE("exec: a blocked name on a mount that links to a program of another name is refused",
          "[docker]") {
  if (!docker_ready()) return;
  TempDir ws;
  fs::create_directory(ws.path() / "bin");
  fs::create_symlink("/bin/busybox", ws.path() / "bin/blocked-prog");
  auto policy = base_policy(ws.path());
  policy.process.blocked_commands = {"blocked-prog"};
  auto plan = make_plan(policy, ws.path(), {"true"});
  plan.env["PATH"] = (ws / "bin") + ":/usr/bin:/bin";
  CaptureSink sink;
  auto r = backend().run(plan, sink);
  REQUIRE(r.error);
  CHECK(r.error->code() == "CRD1003");
  CHECK(r.error->message().find("'" + ws / "bin/blocked-prog" + "'") != std::string::npos);
  CHECK(our_containers().empty());
}

TEST_CASE("fs: a write grant of /tmp is the host's /tmp, without it /tmp is private", "[docker]") {
  if (!docker_ready()) return;
  TempDir ws;
  std::string name = "cordon-dk-tmp-" + std::to_string(::getpid());
  std::string host_file = "/tmp/" + name;
  auto policy = base_policy(ws.path());
  CaptureSink private_sink;
  auto isolated =
      run_sh(policy, ws.path(), "echo private > /tmp/" + name + " && echo ok", private_sink);
  CHECK(isolated.exit_code == 0);
  CHECK(private_sink.out == "ok\n");
  CHECK_FALSE(fs::exists(host_file));
  policy.filesystem.write.push_back("/tmp");
  CaptureSink shared_sink;
  auto shared =
      run_sh(policy, ws.path(), "echo shared > /tmp/" + name + " && echo ok", shared_sink);
  CHECK(shared.exit_code == 0);
  CHECK(shared_sink.out == "ok\n");
  CHECK(fs::exists(host_file));
  if (fs::exists(host_file)) CHECK(read_file(host_file) == "shared\n");
  CHECK(reported(shared, cap::fs_write_confine).find("/tmp is the host's") != std::string::npos);
  ::unlink(host_file.c_str());
}
