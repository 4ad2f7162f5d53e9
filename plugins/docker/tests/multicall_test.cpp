// Blocked programs reached through a multi-call binary (`busybox unshare` while unshare is
// blocked): the multi-call program that provides a blocked applet is masked, under every name it
// has, as the landlock backend masks it; the image is asked which ones do (`busybox --list`, in a
// scan container). Units for the scan's plumbing, and runs against the real daemon, both ways.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "exec_block.hpp"
#include "multicall.hpp"
#include "process.hpp"
#include "support.hpp"

using namespace cordon;
using namespace cordon::docker;
using namespace cordon::docker::test;

namespace fs = std::filesystem;

namespace {

// The test image with a second copy of its busybox, /usr/sbin/bb (docker create, cp, commit).
std::string two_busyboxes() {
  static const std::string image = [] {
    std::string name = "cordon-test/busybox-two:1";
    if (docker_cli("image inspect " + name) == 0) return name;
    std::string box = "cordon-two-" + std::to_string(::getpid());
    bool ok = docker_cli("create --name " + box + " " + test_image() + " /bin/true") == 0 &&
              docker_cli("cp /bin/busybox " + box + ":/usr/sbin/bb") == 0 &&
              docker_cli("commit " + box + " " + name) == 0;
    docker_cli("rm -f " + box);
    REQUIRE(ok);
    return name;
  }();
  return image;
}

// fsop (the escape suite's probe, static) copied into the workspace, where the command runs it.
std::string fsop_in(const TempDir& ws) {
  std::string copy = ws / "fsop";
  fs::copy_file(CORDON_DOCKER_FSOP, copy, fs::copy_options::overwrite_existing);
  ::chmod(copy.c_str(), 0755);
  ::chown(copy.c_str(), 65534, 65534);
  return copy;
}

RunResult run_fsop(const TempDir& ws, const std::vector<std::string>& blocked,
                   std::vector<std::string> args, CaptureSink& sink,
                   const std::string& image = test_image()) {
  auto policy = base_policy(ws.path().string());
  policy.process.blocked_commands = blocked;
  args.insert(args.begin(), fsop_in(ws));
  auto plan = make_plan(policy, ws.path().string(), args);
  plan.settings["image"] = image;
  return backend().run(plan, sink);
}

}  // namespace

TEST_CASE("multicall: the scan names the files to mask and the links that lead to them", "[unit]") {
  CHECK(multicall_command({"su", "unshare"}, {"/bin", "/usr/bin"}) ==
        std::vector<std::string>{"/.cordon-waiter", "--multicall", "su", "unshare", "--", "/bin",
                                 "/usr/bin"});
  auto m = multicall_paths(
      "/usr/bin/busybox\n=/bin/busybox\n=/bin/sh\n/usr/bin/busybox\n\n"
      "relative\n/usr/sbin/bb\n");
  CHECK(m.files == std::vector<std::string>{"/usr/bin/busybox", "/usr/sbin/bb"});
  CHECK(m.aliases == std::vector<std::string>{"/bin/busybox", "/bin/sh"});
  // A blocked name that links to a multi-call program providing it reaches the program's mask;
  // one that links to a program of another name that does not provide it is refused.
  std::map<std::string, PathStat> stats{{"/bin/su", {true, true, "/bin/busybox"}},
                                        {"/bin/busybox", {true, false, ""}}};
  auto masked = decide_masks({"/bin/su"}, stats, m);
  CHECK(masked.refusal.empty());
  CHECK(masked.files ==
        std::vector<std::string>{"/bin/busybox", "/usr/bin/busybox", "/usr/sbin/bb"});
  auto refused = decide_masks({"/bin/su"}, stats, {});
  CHECK(refused.refusal.find("'/bin/su' is a link to the program '/bin/busybox'") !=
        std::string::npos);
}

TEST_CASE("multicall: a busybox that provides a blocked applet cannot run, by any name",
          "[docker][multicall]") {
  if (!docker_ready()) return;
  TempDir ws;
  // `busybox unshare` while unshare is blocked: the program itself is masked.
  CaptureSink applet;
  auto r = run_fsop(ws, {"unshare"}, {"execwith", "/bin/busybox", "unshare"}, applet);
  INFO(applet.out << applet.err);
  CHECK_FALSE(r.error);
  CHECK(applet.out.find("ERR EACCES") != std::string::npos);
  CHECK(reported(r, "fs.exec.block").find("/bin/busybox") != std::string::npos);
  CaptureSink shell;
  run_fsop(ws, {"unshare"}, {"exec", "/bin/sh"}, shell);
  CHECK(shell.out.find("ERR EACCES") != std::string::npos);
  // Both ways: with a blocked name that is no applet of it, busybox runs.
  CaptureSink unblocked;
  auto ok = run_fsop(ws, {"cordon-blocked-tool"}, {"execwith", "/bin/busybox", "true"}, unblocked);
  INFO(unblocked.out << unblocked.err);
  CHECK_FALSE(ok.error);
  CHECK(ok.exit_code == 0);
  CHECK(unblocked.out.find("ERR") == std::string::npos);
}

TEST_CASE("multicall: every copy of the multi-call program is masked, whatever its name",
          "[docker][multicall]") {
  if (!docker_ready()) return;
  TempDir ws;
  std::string image = two_busyboxes();
  for (const char* copy : {"/bin/busybox", "/usr/sbin/bb"}) {
    INFO(copy);
    CaptureSink denied;
    run_fsop(ws, {"unshare"}, {"execwith", copy, "unshare"}, denied, image);
    CHECK(denied.out.find("ERR EACCES") != std::string::npos);
    CaptureSink allowed;
    auto ran = run_fsop(ws, {"cordon-blocked-tool"}, {"execwith", copy, "true"}, allowed, image);
    // It ran: busybox itself runs `true`; under another name it says it has no such applet.
    CHECK(allowed.out.find("ERR") == std::string::npos);
    if (std::string(copy) == "/bin/busybox")
      CHECK(ran.exit_code == 0);
    else
      CHECK(allowed.err.find("applet not found") != std::string::npos);
  }
}

TEST_CASE("multicall: a command whose program is masked is refused by name, not as unexecutable",
          "[docker][multicall]") {
  if (!docker_ready()) return;
  TempDir ws;
  auto run = [&](const std::vector<std::string>& blocked, std::vector<std::string> argv,
                 CaptureSink& sink) {
    auto policy = base_policy(ws.path().string());
    policy.process.blocked_commands = blocked;
    auto plan = make_plan(policy, ws.path().string(), std::move(argv));
    plan.settings["image"] = test_image();
    return backend().run(plan, sink);
  };
  // busybox provides unshare: the program is masked, and the error says so, by both names.
  for (const char* program : {"busybox", "/bin/busybox"}) {
    INFO(program);
    CaptureSink sink;
    auto r = run({"unshare", "cordon-blocked-tool"}, {program, "echo", "hi"}, sink);
    REQUIRE(r.error);
    CHECK(r.error->code() == std::string("CRD4005"));
    CHECK(r.error->message().find("'unshare'") != std::string::npos);
    CHECK(r.error->message().find("masked") != std::string::npos);
    CHECK(r.exit_code == 126);
    CHECK(sink.out.empty());
  }
  // Both ways: with no applet of it blocked, it runs.
  CaptureSink ran;
  auto ok = run({"cordon-blocked-tool"}, {"busybox", "echo", "hi"}, ran);
  CHECK_FALSE(ok.error);
  CHECK(ran.out == "hi\n");
  // Another file that cannot be executed is still CRD5005.
  write_file((ws.path() / "plain").string(), "not a program\n", 0644);
  CaptureSink plain;
  auto other = run({"unshare"}, {(ws.path() / "plain").string()}, plain);
  REQUIRE(other.error);
  CHECK(other.error->code() == std::string("CRD5005"));
}
