// The remote-cordon path against the fixture's sshd: the host runs this build's own cordon
// (`cordon` setting), whose landlock backend enforces the policy sent in each request.
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cordon/policy_loader.hpp>
#include <cordon/sdk/error.hpp>
#include <cordon/sdk/requirements.hpp>
#include <cordon/sdk/stop_token.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "support.hpp"

using namespace cordon;
using namespace cordon::ssh;
using namespace cordon::ssh::test;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

boost::json::object cordon_settings(const std::string& cordon = CORDON_CLI) {
  auto s = settings(0);
  s["cordon"] = cordon;
  return s;
}

// The standard preset for `ws` (as `cordon run` resolves it here), with `blocked` added and
// without the sandbox-wide memory and process totals: the fixture's login has no cgroup.
Plan cordon_plan(const RemoteWorkspace& ws, std::vector<std::string> argv,
                 std::chrono::milliseconds timeout = 60s,
                 const std::vector<std::string>& blocked = {}) {
  Policy p = load_preset("standard");
  p.limits.timeout = timeout;
  p.limits.memory_mb.reset();
  p.limits.max_processes.reset();
  for (const auto& b : blocked) p.filesystem.blocked.push_back(b);
  const char* home = std::getenv("HOME");
  p = resolve_paths(std::move(p), PathContext{ws.dir, home ? home : "/"});
  Plan plan;
  plan.policy = p;
  plan.requirements = derive_requirements(p);
  plan.argv = std::move(argv);
  plan.workspace = ws.dir;
  plan.env = {{"PATH", "/usr/local/bin:/usr/bin:/bin"}, {"LANG", "C.UTF-8"}};
  plan.settings = cordon_settings();
  plan.settings["workspace"] = ws.dir.string();
  plan.deadline = std::chrono::steady_clock::now() + timeout;
  return plan;
}

SshBackend& remote() {
  static auto* instance = new SshBackend(BackendContext{"ssh", nullptr, "/var/tmp"});
  return *instance;
}

}  // namespace

TEST_CASE("ssh: with a remote cordon the host claims what its landlock backend proves",
          "[ssh][remote-cordon]") {
  if (!ready()) return;
  auto probe = remote().probe_for(cordon_settings());
  INFO(probe.reason);
  REQUIRE(probe.available);
  for (const char* id : {"fs.read.confine", "fs.write.confine", "fs.read.block", "net.deny"}) {
    INFO(id);
    CHECK(probe.proves(id));
    CHECK(probe.evidence(id).find("the remote cordon " + std::string(CORDON_CLI)) == 0);
  }
  // The plain-shell path claims none of these.
  auto shell = remote().probe_for(settings(1));
  CHECK_FALSE(shell.proves("fs.read.confine"));
}

TEST_CASE("ssh: a remote cordon the settings name but cannot run makes the host unavailable",
          "[ssh][remote-cordon]") {
  if (!ready()) return;
  SshBackend fresh(BackendContext{"ssh", nullptr, "/var/tmp"});
  auto probe = fresh.probe_for(cordon_settings("/nonexistent/cordon"));
  CHECK_FALSE(probe.available);
  CHECK(probe.reason.find("/nonexistent/cordon") != std::string::npos);
}

TEST_CASE("ssh: the remote cordon enforces the policy sent with the run, both ways",
          "[ssh][remote-cordon]") {
  if (!ready()) return;
  RemoteWorkspace ws;
  ws.put("public.txt", "open\n");
  ws.put("secret.txt", "hidden\n");
  const std::string outside = "/var/tmp/cordon-ssh-outside-" + std::to_string(::getpid());
  fs::remove(outside);
  // Blocked by a path beneath the local workspace: it must name the remote one's file.
  std::vector<std::string> blocked = {"{workspace}/secret.txt"};

  CaptureSink wrote;
  auto w =
      remote().run(cordon_plan(ws, {"sh", "-c", "echo made > inside.txt"}, 60s, blocked), wrote);
  INFO(wrote.err << (w.error ? w.error->message() : ""));
  REQUIRE_FALSE(w.error);
  CHECK(w.exit_code == 0);
  CHECK(fs::exists(ws.dir / "inside.txt"));

  CaptureSink denied;
  auto d = remote().run(cordon_plan(ws, {"sh", "-c", "echo x > " + outside}, 60s, blocked), denied);
  REQUIRE_FALSE(d.error);
  CHECK(d.exit_code != 0);
  CHECK_FALSE(fs::exists(outside));

  CaptureSink read;
  auto r = remote().run(cordon_plan(ws, {"cat", "public.txt"}, 60s, blocked), read);
  REQUIRE_FALSE(r.error);
  CHECK(read.out == "open\n");
  CaptureSink hidden;
  auto h = remote().run(cordon_plan(ws, {"cat", "secret.txt"}, 60s, blocked), hidden);
  REQUIRE_FALSE(h.error);
  CHECK(h.exit_code != 0);
  CHECK(hidden.out.find("hidden") == std::string::npos);

  bool remote_report = false;
  for (const auto& e : r.report)
    remote_report |=
        e.capability == "fs.read.block" && e.mechanism.find("the remote cordon on ") == 0;
  CHECK(remote_report);
}

TEST_CASE("ssh: through a remote cordon argv, stdin, stdout, stderr and the status are exact",
          "[ssh][remote-cordon]") {
  if (!ready()) return;
  RemoteWorkspace ws;
  std::string nasty = "a b;$(touch /tmp/pwned-$$)`id`'\"\\\n\t*?~!#&|<>{}\xff\xfe";
  CaptureSink sink;
  auto r = remote().run(cordon_plan(ws, {"printf", "%s|", nasty, "-n", "x=y", ""}), sink);
  INFO(sink.err << (r.error ? r.error->message() : ""));
  REQUIRE_FALSE(r.error);
  CHECK(sink.out == nasty + "|-n|x=y||");

  auto plan = cordon_plan(ws, {"sh", "-c", "cat; echo done; echo oops >&2; exit 7"});
  plan.stdin_data = std::string(200000, 'x');
  CaptureSink io;
  auto s = remote().run(plan, io);
  REQUIRE_FALSE(s.error);
  CHECK(s.exit_code == 7);
  CHECK(io.out == std::string(200000, 'x') + "done\n");
  CHECK(io.err == "oops\n");

  // A request over one output frame's size (stdin of 3 MiB) travels whole; output is capped.
  auto big = cordon_plan(ws, {"wc", "-c"});
  big.stdin_data = std::string(3u << 20, 'y');
  CaptureSink counted;
  auto b = remote().run(big, counted);
  REQUIRE_FALSE(b.error);
  CHECK(counted.out == std::to_string(3u << 20) + "\n");
}

TEST_CASE("ssh: through a remote cordon a timeout and a stop end the whole remote tree",
          "[ssh][remote-cordon]") {
  if (!ready()) return;
  RemoteWorkspace ws;
  std::string m = marker("rc-timeout");
  CaptureSink sink;
  auto r = remote().run(
      cordon_plan(ws, {"sh", "-c", "setsid sh -c 'sleep 300; : " + m + "' & sleep 200; : " + m},
                  1500ms),
      sink);
  CHECK(r.timed_out);
  CHECK(gone_within(m, 3s));

  auto stop = std::make_shared<StopToken>();
  auto plan =
      cordon_plan(ws, {"sh", "-c", "trap 'echo got-term; exit 3' TERM; echo up; sleep 100 & wait"});
  plan.stop = stop;
  CueSink stopped("up\n");  // the trap is set: the stop is asked for then, not at a guess
  std::thread asker([stop, &stopped] {
    stopped.wait(30s);
    stop->request(StopToken::Level::terminate);
  });
  auto s = remote().run(plan, stopped);
  asker.join();
  CHECK(stopped.out.find("got-term") != std::string::npos);
  CHECK(s.exit_code == 3);

  // What ignores the request is killed with the remote cordon, and nothing of it is left.
  std::string m2 = marker("rc-stubborn");
  auto killer = std::make_shared<StopToken>();
  auto stubborn = cordon_plan(ws, {"sh", "-c", "trap '' TERM; echo up; sleep 100; : " + m2});
  stubborn.stop = killer;
  CueSink sink2("up\n");
  std::thread asker2([killer, &sink2] {
    sink2.wait(30s);
    killer->request(StopToken::Level::terminate);
    std::this_thread::sleep_for(500ms);
    killer->request(StopToken::Level::kill);
  });
  auto k = remote().run(stubborn, sink2);
  asker2.join();
  CHECK(k.exit_code != 0);
  CHECK(gone_within(m2, 3s));
}

TEST_CASE("ssh: a clause the remote cordon cannot prove is refused, naming it",
          "[ssh][remote-cordon]") {
  if (!ready()) return;
  RemoteWorkspace ws;
  auto plan = cordon_plan(ws, {"true"});
  plan.policy.process.allowed_commands = {"true"};  // fs.exec.confine: landlock cannot prove it
  plan.requirements = derive_requirements(plan.policy);
  CaptureSink sink;
  auto r = remote().run(plan, sink);
  REQUIRE(r.error);
  CHECK(code_of(r) == code::kUnproven);
  CHECK(r.error->message().find("fs.exec.confine") != std::string::npos);
}

TEST_CASE("ssh: runs reuse one remote cordon server per connection, restarted if it dies",
          "[ssh][remote-cordon]") {
  if (!ready()) return;
  RemoteWorkspace ws;
  // This test's own name for cordon, so that it finds (and kills) only its own server.
  std::string own = ws.dir.string() + "-cordon";
  std::filesystem::create_symlink(CORDON_CLI, own);
  auto with_own = [&](std::vector<std::string> argv) {
    auto plan = cordon_plan(ws, std::move(argv));
    plan.settings["cordon"] = own;
    return plan;
  };
  SshBackend fresh(BackendContext{"ssh", nullptr, "/var/tmp"});
  auto servers = [&] { return processes_matching(own + " serve --framed"); };
  CaptureSink a;
  auto first = fresh.run(with_own({"echo", "one"}), a);
  REQUIRE_FALSE(first.error);
  CHECK(a.out == "one\n");
  bool serving = false;
  for (const auto& n : first.notes) serving |= n.find("(serving)") != std::string::npos;
  CHECK(serving);
  auto during = servers();
  CHECK(during.size() == 1);
  CaptureSink b;
  auto second = fresh.run(with_own({"echo", "two"}), b);
  CHECK(b.out == "two\n");
  CHECK(servers() == during);  // the same server process answered

  // A server that died while idle is replaced, and nothing of the run is lost.
  for (const auto& line : during) ::kill(std::stoi(line.substr(0, line.find(' '))), SIGKILL);
  CaptureSink c;
  auto third = fresh.run(with_own({"echo", "three"}), c);
  INFO((third.error ? third.error->message() : ""));
  REQUIRE_FALSE(third.error);
  CHECK(c.out == "three\n");
  std::filesystem::remove(own);
}

TEST_CASE("ssh: a remote cordon without `serve` runs each request as a process of its own",
          "[ssh][remote-cordon]") {
  if (!ready()) return;
  RemoteWorkspace ws;
  // An older cordon, as far as the probe can tell: no `serve`, everything else passed on.
  std::string wrapper = ws.dir.string() + "-old-cordon";
  {
    std::ofstream w(wrapper);
    w << "#!/bin/sh\n[ \"$1\" = serve ] && exit 2\nexec '" << CORDON_CLI << "' \"$@\"\n";
  }
  ::chmod(wrapper.c_str(), 0755);
  SshBackend fresh(BackendContext{"ssh", nullptr, "/var/tmp"});
  auto plan = cordon_plan(ws, {"echo", "old"});
  plan.settings["cordon"] = wrapper;
  CaptureSink sink;
  auto r = fresh.run(plan, sink);
  INFO((r.error ? r.error->message() : ""));
  REQUIRE_FALSE(r.error);
  CHECK(sink.out == "old\n");
  for (const auto& n : r.notes) CHECK(n.find("(serving)") == std::string::npos);
  std::filesystem::remove(wrapper);
}

TEST_CASE("ssh: a killed cordon leaves nothing running under the remote cordon",
          "[ssh][remote-cordon]") {
  if (!ready()) return;
  RemoteWorkspace ws;
  std::string m = marker("rc-killed");
  kill_cordon_mid_run("workspace = \"" + ws.dir.string() + "\"\ncordon = \"" + CORDON_CLI + "\"\n",
                      "version = 1\n[limits]\ntimeout = \"300s\"\n", ws.dir.string(), m);
  CHECK(gone_within(m, 5s));
}
