// Runs through the C++ API: status, output, stdin, environment, HOME, /tmp, report, probe.
#include <cordon/sdk/capabilities.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "busy_file.hpp"
#include "support.hpp"

using namespace cordon;
using namespace cordon::landlock::test;

TEST_CASE("probe: proves the base capabilities with evidence", "[userns][probe]") {
  if (!sandbox_available()) return;
  const auto& p = backend().probe();
  for (auto id : {cap::fs_read_confine, cap::fs_read_block, cap::fs_write_confine,
                  cap::fs_exec_block, cap::net_deny, cap::proc_isolate, cap::env_grant,
                  cap::home_private, cap::identity_unprivileged, cap::limit_timeout,
                  cap::proc_no_subprocess, cap::ipc_isolate}) {
    INFO(id << ": " << p.evidence(id));
    CHECK(p.proves(id));
    CHECK_FALSE(p.evidence(id).empty());
  }
  CHECK(p.facts.front().rfind("Landlock ABI ", 0) == 0);
  // Memory is a total only through a cgroup: proven exactly when one is in force (root, or a
  // caller with a delegated cgroup v2 subtree).
  bool cgroup = p.evidence(cap::limit_memory).find("cgroup v") == 0;
  CHECK(p.proves(cap::limit_memory) == cgroup);
  CHECK_FALSE(p.proves("no.such.capability"));
}

TEST_CASE("run: a missing program is CRD5004, a non-executable one CRD5005", "[userns]") {
  if (!sandbox_available()) return;
  TempDir ws;
  auto policy = base_policy(ws.path(), "");
  write_file(ws / "data.txt", "not a program\n", 0644);
  write_file(ws / "script", "#!/bin/sh\necho ran\n", 0755);
  CaptureSink a, b, c;
  auto missing = backend().run(make_plan(policy, ws.path(), {"no-such-program-xyz"}), a);
  REQUIRE(missing.error);
  CHECK(missing.error->code() == "CRD5004");
  CHECK(missing.cli_status() == 127);
  auto denied = backend().run(make_plan(policy, ws.path(), {"./data.txt"}), b);
  REQUIRE(denied.error);
  CHECK(denied.error->code() == "CRD5005");
  CHECK(denied.cli_status() == 126);
  auto runs = backend().run(make_plan(policy, ws.path(), {"./script"}), c);
  CHECK_FALSE(runs.error);
  CHECK(c.out == "ran\n");
}

TEST_CASE("run: a program open for writing a moment runs once free, one kept open is CRD5005",
          "[userns]") {
  if (!sandbox_available()) return;
  TempDir ws;
  auto policy = base_policy(ws.path(), "");
  write_file(ws / "script", "#!/bin/sh\nexit 7\n", 0755);
  // A copy of its writer's descriptor lives a moment (a process forked meanwhile).
  pid_t holder = cordon::testing::hold_for_writing(ws / "script", 300);
  REQUIRE(holder > 0);
  CaptureSink a, b;
  auto ran = backend().run(make_plan(policy, ws.path(), {"./script"}), a);
  cordon::testing::let_go(holder);
  INFO((ran.error ? ran.error->message() : std::string()));
  CHECK_FALSE(ran.error);
  CHECK(ran.exit_code == 7);
  // A file that is still being written is busy, as for execve().
  holder = cordon::testing::hold_for_writing(ws / "script", 30000);
  REQUIRE(holder > 0);
  auto busy = backend().run(make_plan(policy, ws.path(), {"./script"}), b);
  cordon::testing::let_go(holder);
  REQUIRE(busy.error);
  CHECK(busy.error->code() == "CRD5005");
  CHECK(busy.error->message().find(std::strerror(ETXTBSY)) != std::string::npos);
}

TEST_CASE("run: stdout and stderr stream separately, stdin is the plan's or empty", "[userns]") {
  if (!sandbox_available()) return;
  TempDir ws;
  auto policy = base_policy(ws.path(), "");
  CaptureSink sink;
  auto plan = make_plan(policy, ws.path(), {"/bin/sh", "-c", "cat; echo err >&2"});
  plan.stdin_data = std::string(300000, 'x') + "end\n";
  auto r = backend().run(plan, sink);
  CHECK(r.exit_code == 0);
  CHECK(sink.out.size() == 300004);
  CHECK(sink.err == "err\n");
  CHECK(sink.chunks > 2);  // streamed, not delivered at the end in one piece
  CaptureSink empty;
  CHECK(run_sh(policy, ws.path(), "cat; echo done", empty).exit_code == 0);
  CHECK(empty.out == "done\n");
}

TEST_CASE("run: the environment is exactly the granted variables and HOME", "[userns]") {
  if (!sandbox_available()) return;
  TempDir ws;
  ::setenv("CORDON_TEST_SECRET", "hunter2", 1);
  auto policy = base_policy(ws.path(), "");
  CaptureSink sink;
  auto plan = make_plan(policy, ws.path(), {"/usr/bin/env"}, "/root");
  plan.env["EXTRA"] = "1";
  auto r = backend().run(plan, sink);
  ::unsetenv("CORDON_TEST_SECRET");
  CHECK(r.exit_code == 0);
  CHECK(sink.out == "EXTRA=1\nLANG=C.UTF-8\nPATH=/usr/local/bin:/usr/bin:/bin\nHOME=/root\n");
}

TEST_CASE("run: HOME is private, empty, 0700 and writable", "[userns]") {
  if (!sandbox_available()) return;
  TempDir ws, home("cordon-ll-home-");
  write_file(home / "host-file", "host\n");
  auto policy = base_policy(ws.path(), home.path());
  CaptureSink sink;
  auto r = run_sh(policy, ws.path(),
                  "echo $HOME; ls -A $HOME | wc -l; stat -c %a $HOME; touch $HOME/x && echo wrote",
                  sink, home.path());
  CHECK(r.exit_code == 0);
  CHECK(sink.out == home.path().string() + "\n0\n700\nwrote\n");
  CHECK_FALSE(std::filesystem::exists(home / "x"));  // the host's home is untouched
}

TEST_CASE("run: with read = host the host's home is hidden behind the private HOME", "[userns]") {
  if (!sandbox_available()) return;
  TempDir ws, home("cordon-ll-home-", 65534, host_area());
  write_file(home / "host-file", "host\n");
  auto policy = base_policy(ws.path(), home.path());
  policy.filesystem.read_host = true;
  CaptureSink sink;
  auto r = run_sh(policy, ws.path(),
                  "echo $HOME; ls -A $HOME | wc -l; cat " + home / "host-file" + " || echo hidden",
                  sink, home.path());
  CHECK(r.exit_code == 0);
  CHECK(sink.out == home.path().string() + "\n0\nhidden\n");
  SECTION("filesystem.home = host shows it") {
    policy.filesystem.home = HomeMode::host;
    CaptureSink host;
    run_sh(policy, ws.path(), "cat " + home / "host-file", host, home.path());
    CHECK(host.out == "host\n");
  }
}

TEST_CASE("run: no descriptor of cordon reaches the command", "[userns]") {
  if (!sandbox_available()) return;
  TempDir ws;
  int leak = ::open("/etc/passwd", O_RDONLY);  // deliberately without O_CLOEXEC
  REQUIRE(leak >= 3);
  auto policy = base_policy(ws.path(), "");
  policy.filesystem.read.push_back(probe_tool_dir());
  CaptureSink sink;
  auto r = backend().run(make_plan(policy, ws.path(), {probe_tool(), "fds"}), sink);
  ::close(leak);
  CHECK(r.exit_code == 0);
  CHECK(sink.out == "0 1 2 \n");
}

TEST_CASE("run: /tmp is private unless the policy writes the host's", "[userns]") {
  if (!sandbox_available()) return;
  TempDir ws, marker("cordon-ll-marker-");
  auto policy = base_policy(ws.path(), "");
  std::string probe = "test -e " + marker.path().string() +
                      " && echo visible || echo hidden; "
                      "echo hi > /tmp/inside && cat /tmp/inside";
  CaptureSink priv;
  CHECK(run_sh(policy, ws.path(), probe, priv).exit_code == 0);
  CHECK(priv.out == "hidden\nhi\n");
  CHECK_FALSE(std::filesystem::exists("/tmp/inside"));
  CaptureSink shared;
  policy.filesystem.write.push_back(marker.path().string());
  CHECK(run_sh(policy, ws.path(), "test -d " + marker.path().string() + " && echo visible", shared)
            .exit_code == 0);
  CHECK(shared.out == "visible\n");
}

TEST_CASE("run: the report names a mechanism for every requirement", "[userns]") {
  if (!sandbox_available()) return;
  TempDir ws;
  auto policy = base_policy(ws.path(), "");
  policy.filesystem.blocked = {"/etc/shadow"};
  policy.process.blocked_commands = {"su"};
  policy.limits.max_open_files = 64;
  CaptureSink sink;
  auto plan = make_plan(policy, ws.path(), {"/bin/true"});
  auto r = backend().run(plan, sink);
  REQUIRE_FALSE(r.error);
  REQUIRE(r.report.size() == plan.requirements.size());
  for (std::size_t i = 0; i < r.report.size(); ++i) {
    INFO(r.report[i].capability << ": " << r.report[i].mechanism);
    CHECK(r.report[i].capability == plan.requirements[i].id);
    CHECK(r.report[i].mechanism != "not known to this backend");
  }
  auto line = [&r](std::string_view id) {
    for (const auto& e : r.report)
      if (e.capability == id) return e.mechanism;
    return std::string();
  };
  CHECK(line(cap::net_deny) == "network namespace with only loopback");
  CHECK(line(cap::limit_files) == "RLIMIT_NOFILE = 64");
  CHECK(line(cap::fs_exec_block).find("/usr/bin/su") != std::string::npos);
}

TEST_CASE("run: refuses a plan the probe did not prove", "[userns]") {
  if (!sandbox_available()) return;
  TempDir ws;
  auto policy = base_policy(ws.path(), "");
  CaptureSink sink;
  auto plan = make_plan(policy, ws.path(), {"/bin/sh", "-c", "echo ran"});
  plan.requirements.push_back({"made.up.capability", "a clause no backend knows"});
  auto r = backend().run(plan, sink);
  REQUIRE(r.error);
  CHECK(r.error->code() == "CRD1001");
  CHECK(r.error->message().find("made.up.capability") != std::string::npos);
  CHECK(sink.out.empty());
  if (!backend().probe().proves(cap::limit_cpu_share)) {
    policy.limits.cpu_percent = 50;
    auto share = backend().run(make_plan(policy, ws.path(), {"/bin/true"}), sink);
    REQUIRE(share.error);
    CHECK(share.error->code() == "CRD1001");
    CHECK(share.error->message().find("limit.cpu_share") != std::string::npos);
  }
}
