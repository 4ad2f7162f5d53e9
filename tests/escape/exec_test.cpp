// process.blocked_commands and process.allowed_commands are enforced by the kernel (an execute
// right), not by matching the command's name: a path, a symlink or a PATH lookup all end the same.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "cordon_run.hpp"
#include "probes.hpp"

using namespace escape;

namespace {

/// listed/tools/ holds two copies of /bin/true, `blocked-prog` and `allowed-prog`.
std::string make_tools(const Scratch& s) {
  std::string tools = s.listed() + "/tools";
  s.mkdir(tools);
  for (const char* name : {"blocked-prog", "allowed-prog"}) {
    std::filesystem::copy_file(true_program(), tools + "/" + name);
    chmod((tools + "/" + name).c_str(), 0755);
  }
  return tools;
}

PolicySpec blocking(const Scratch& s, const std::string& tools) {
  auto policy = confined(s.root());
  policy.blocked_commands = std::vector<std::string>{"sudo", "su", "blocked-prog"};
  policy.env_set["PATH"] = tools + ":" + sandbox_probe_dir(s) + ":/usr/bin:/bin";
  return policy;
}

/// The dynamic loader of this architecture, or "" when none of the usual ones exists.
std::string dynamic_loader() {
  for (const char* p : {"/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1",
                        "/lib/ld-linux-armhf.so.3", "/lib64/ld64.so.2"})
    if (access(p, X_OK) == 0) return p;
  return "";
}

/// Runs `cordon run` without --json, so that the status is cordon's own exit status.
Ran run_plain(Scratch& s, const PolicySpec& policy, const std::vector<std::string>& command) {
  RunExtras plain;
  plain.json = false;
  return run_cordon(s, policy, command, plain);
}

}  // namespace

TEST_CASE("escape: a blocked command cannot be executed through PATH",
          "[escape][userns][exec][blocked_commands][docker]") {
  Scratch s;
  auto tools = make_tools(s);
  auto policy = blocking(s, tools);
  auto allowed = run_plain(s, policy, {"allowed-prog"});
  INFO(allowed.describe());
  CHECK(allowed.proc.status == 0);
  auto denied = run_plain(s, policy, {"blocked-prog"});
  INFO(denied.describe());
  // cordon refuses the resolved program before exec (CRD4005); the kernel check is below.
  CHECK(denied.proc.status == 125);
  CHECK_THAT(denied.proc.err, Catch::Matchers::Contains("CRD4005"));
  // The kernel, not cordon's argv check, must say no: exec it from inside the sandbox.
  auto inside = run_probe(s, policy, "fsop", {"exec", tools + "/blocked-prog"});
  INFO(inside.describe());
  CHECK_THAT(inside.line("exec " + tools + "/blocked-prog"), IsErr({"EACCES"}));
  auto inside_ok = run_probe(s, policy, "fsop", {"exec", tools + "/allowed-prog"});
  INFO(inside_ok.describe());
  CHECK(inside_ok.status() == 0);
}

TEST_CASE("escape: a blocked command cannot be executed through a symlink",
          "[escape][userns][exec][blocked_commands][symlink][docker]") {
  Scratch s;
  auto tools = make_tools(s);
  auto policy = blocking(s, tools);
  REQUIRE(symlink((tools + "/blocked-prog").c_str(), (s.ws() + "/innocent").c_str()) == 0);
  REQUIRE(symlink((tools + "/allowed-prog").c_str(), (s.ws() + "/fine").c_str()) == 0);
  auto allowed = run_plain(s, policy, {s.ws() + "/fine"});
  INFO(allowed.describe());
  CHECK(allowed.proc.status == 0);
  auto denied = run_plain(s, policy, {s.ws() + "/innocent"});
  INFO(denied.describe());
  CHECK(denied.proc.status == 125);  // CRD4005 on the resolved program; the kernel's check below
  CHECK_THAT(denied.proc.err, Catch::Matchers::Contains("CRD4005"));
  auto inside = run_probe(s, policy, "fsop",
                          {"symlink", tools + "/blocked-prog", "made-alias", "exec", "made-alias"});
  INFO(inside.describe());
  CHECK_THAT(inside.line("symlink " + tools + "/blocked-prog"), IsOk());
  CHECK_THAT(inside.line("exec made-alias"), IsErr({"EACCES"}));
}

TEST_CASE("escape: a blocked command cannot be copied into the workspace by the sandbox",
          "[escape][userns][exec][blocked_commands][docker]") {
  Scratch s;
  auto tools = make_tools(s);
  auto policy = blocking(s, tools);
  // A copy needs the file's content: blocked means unreadable too, so the copy cannot start.
  auto ran = run_probe(s, policy, "fsop",
                       {"read", tools + "/blocked-prog", "read", tools + "/allowed-prog"});
  INFO(ran.describe());
  CHECK_THAT(ran.line("read " + tools + "/allowed-prog"), IsOk());
  CHECK_THAT(ran.line("read " + tools + "/blocked-prog"), IsErr(kReadDenied));
}

TEST_CASE("escape: allowed_commands is refused, since the dynamic loader would bypass it",
          "[escape][userns][exec][allowed_commands][docker]") {
  Scratch s;
  auto tools = make_tools(s);
  auto policy = confined(s.root());
  policy.env_set["PATH"] = tools + ":" + sandbox_probe_dir(s) + ":/usr/bin:/bin";
  auto ok = run_cordon(s, policy, {"fsop", "exec", tools + "/allowed-prog"});
  require_ran(ok);
  INFO(ok.describe());
  CHECK(ok.status() == 0);
  // Landlock checks EXECUTE at execve only: `ld.so /usr/bin/id` would run id. Refuse, loudly.
  policy.allowed_commands = std::vector<std::string>{"fsop", "allowed-prog"};
  auto refused = run_plain(s, policy, {"/usr/bin/id"});
  INFO(refused.describe());
  CHECK(refused.proc.status == 125);
  CHECK_THAT(refused.proc.err,
             Catch::Matchers::Contains("CRD1001") && Catch::Matchers::Contains("fs.exec.confine"));
  CHECK_THAT(refused.proc.out, !Catch::Matchers::Contains("uid="));
}

TEST_CASE("escape: allow_subprocess = false stops the command from starting processes",
          "[escape][userns][exec][subprocess][docker]") {
  Scratch s;
  auto policy = confined(s.root());
  auto own = unique_marker("cordon-escape-sub");
  auto ok = run_probe(s, policy, "procprobe", {"own", own});
  INFO(ok.describe());
  CHECK_THAT(ok.line("own " + own), IsOk());
  policy.allow_subprocess = false;
  if (on_docker()) {
    // The daemon's init forks the command, so a container's seccomp profile cannot deny fork to
    // the command alone: docker refuses proc.no_subprocess, and the command never runs.
    RunExtras plain;
    plain.json = false;
    auto refused = run_cordon(s, policy, {probe("bomb"), "fork", "4"}, plain);
    INFO(refused.describe());
    CHECK(refused.proc.status == 125);
    CHECK_THAT(refused.proc.err, Catch::Matchers::Contains("CRD1001") &&
                                     Catch::Matchers::Contains("proc.no_subprocess"));
    CHECK(refused.lines("fork").empty());
    return;
  }
  auto denied = run_probe(s, policy, "bomb", {"fork", "4"});
  INFO(denied.describe());
  CHECK_THAT(denied.line("fork"), IsErr({"EAGAIN", "EPERM"}));
  CHECK_THAT(denied.line("fork"), Catch::Matchers::EndsWith("after 0"));
}

// Not on docker: the test image (static busybox) has no dynamic loader.
TEST_CASE("escape: a blocked program cannot be run through the dynamic loader",
          "[escape][userns][exec][blocked_commands]") {
  std::string loader = dynamic_loader();
  ESCAPE_REQUIRE_ENV(!loader.empty(), "no known dynamic loader on this host");
  Scratch s;
  auto tools = make_tools(s);
  auto policy = confined(s.root());
  policy.env_set["PATH"] = tools + ":" + sandbox_probe_dir(s) + ":/usr/bin:/bin";
  auto ok = run_cordon(s, policy, {"fsop", "execwith", loader, tools + "/allowed-prog"});
  require_ran(ok);
  INFO(ok.describe());
  CHECK(ok.status() == 0);
  // Blocked programs are masked, not just denied EXECUTE: the loader cannot even read them.
  policy.blocked_commands = std::vector<std::string>{"blocked-prog"};
  auto denied = run_cordon(s, policy, {"fsop", "execwith", loader, tools + "/blocked-prog"});
  require_ran(denied);
  INFO(denied.describe());
  CHECK(denied.status() != 0);
}

TEST_CASE("escape: a setuid-root program gives no privilege in the sandbox",
          "[escape][userns][exec][identity][root][docker]") {
  ESCAPE_REQUIRE_ENV(running_as_root(), "needs root: only root can make a setuid-root file");
  Scratch s;
  std::string suid = s.listed() + "/suid-ids";
  std::filesystem::copy_file(probe("lifeprobe"), suid);
  REQUIRE(chown(suid.c_str(), 0, 0) == 0);
  REQUIRE(chmod(suid.c_str(), 04755) == 0);
  // On the host it works as setuid programs do: run as nobody, it has euid 0.
  SpawnOptions host;
  host.argv = {"/usr/sbin/runuser", "-u", "nobody", "--", suid, "ids"};
  auto on_host = make_ran(run_process(host), false);
  INFO(on_host.describe());
  CHECK_THAT(on_host.line("ids"), Catch::Matchers::Contains("euid=0 "));
  auto ran = run_cordon(s, confined(s.root()), {suid, "ids"});
  require_ran(ran);
  INFO(ran.describe());
  CHECK_THAT(ran.line("ids"), Catch::Matchers::Contains("uid=" + std::to_string(sandbox_uid()) +
                                                        " euid=" + std::to_string(sandbox_uid())));
}

TEST_CASE("escape: every copy of a blocked command on PATH is denied",
          "[escape][userns][exec][blocked_commands][docker]") {
  Scratch s;
  auto tools = make_tools(s);
  std::string later = s.listed() + "/later-tools";
  s.mkdir(later);
  std::filesystem::copy_file(true_program(), later + "/blocked-prog");
  std::filesystem::copy_file(true_program(), later + "/other-prog");
  chmod((later + "/blocked-prog").c_str(), 0755);
  chmod((later + "/other-prog").c_str(), 0755);
  auto policy = blocking(s, tools);
  policy.env_set["PATH"] = tools + ":" + later + ":" + sandbox_probe_dir(s) + ":/usr/bin:/bin";
  // The first match on PATH is what `blocked-prog` runs; the later one is the same command to
  // anyone who names it by path.
  auto ran = run_probe(s, policy, "fsop",
                       {"read", later + "/other-prog", "exec", later + "/blocked-prog"});
  INFO(ran.describe());
  CHECK_THAT(ran.line("read " + later + "/other-prog"), IsOk());
  CHECK_THAT(ran.line("exec " + later + "/blocked-prog"), IsErr({"EACCES"}));
}
