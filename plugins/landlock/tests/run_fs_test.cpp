// Filesystem enforcement, both ways: reads, writes, blocked paths, blocked and allowed programs.
#include <unistd.h>

#include <sstream>

#include "ruleset.hpp"
#include "support.hpp"

using namespace cordon;
using namespace cordon::landlock::test;

namespace {

// Runs `script`; returns its stdout (stderr is dropped).
std::string sh(const Policy& policy, const TempDir& ws, const std::string& script,
               const std::string& home = "/nonexistent-home") {
  CaptureSink sink;
  auto r = run_sh(policy, ws.path(), script, sink, home);
  if (r.error) return "error: " + r.error->render();
  return sink.out;
}

// "yes" when `command` succeeds, "no" otherwise, one line per command.
std::string tries(std::initializer_list<std::string> commands) {
  std::string script;
  for (const auto& c : commands)
    script += "if " + c + " >/dev/null 2>&1; then echo yes; else echo no; fi; ";
  return script;
}

}  // namespace

TEST_CASE("fs: reads are confined to the readable paths", "[userns][fs]") {
  if (!sandbox_available()) return;
  TempDir ws, outside("cordon-ll-outside-", 65534, host_area());
  write_file(outside / "secret", "s3cret\n");
  REQUIRE(::symlink((outside / "secret").c_str(), (ws / "link").c_str()) == 0);
  auto policy = base_policy(ws.path(), "");
  CHECK(sh(policy, ws,
           tries({"cat /etc/passwd", "cat " + (outside / "secret"), "ls " + outside.path().string(),
                  "cat link", "cat /usr/../" + (outside / "secret").substr(1), "ls /var",
                  "cat /proc/1/root" + (outside / "secret")})) == "yes\nno\nno\nno\nno\nno\nno\n");
  auto root = sh(policy, ws, "ls /");
  CHECK(root.find("usr\n") != std::string::npos);
  for (auto absent : {"var\n", "root\n", "srv\n", "boot\n", "sys\n"})
    CHECK(root.find(absent) == std::string::npos);
  SECTION("the same path becomes readable when granted") {
    policy.filesystem.read.push_back(outside.path().string());
    CHECK(sh(policy, ws, "cat link") == "s3cret\n");
  }
}

TEST_CASE("fs: writes are confined to the writable paths", "[userns][fs]") {
  if (!sandbox_available()) return;
  TempDir ws, area("cordon-ll-area-", 65534, host_area());
  write_file(area / "file", "keep\n");
  auto policy = base_policy(ws.path(), "");
  policy.filesystem.read.push_back(area.path().string());
  auto a = area.path().string();
  CHECK(sh(policy, ws,
           tries({"echo x > new", "mkdir d", "mv new d/", "rm -r d", "echo x > " + a + "/new",
                  "echo x >> " + a + "/file", "true > " + a + "/file", "rm " + a + "/file",
                  "chmod 777 " + a + "/file", "mkdir " + a + "/d", "ln -s x " + a + "/l",
                  "touch /etc/x"})) == "yes\nyes\nyes\nyes\nno\nno\nno\nno\nno\nno\nno\nno\n");
  CHECK(read_file(area / "file") == "keep\n");
  SECTION("read = host: still no writes outside the writable paths") {
    policy.filesystem.read_host = true;
    CHECK(sh(policy, ws, tries({"echo x > ok", "echo x > " + a + "/new", "cat " + a + "/file"})) ==
          "yes\nno\nyes\n");
  }
  SECTION("granting the path as writable allows it") {
    policy.filesystem.write.push_back(a);
    CHECK(sh(policy, ws, tries({"echo x > " + a + "/new"})) == "yes\n");
  }
}

TEST_CASE("fs: blocked paths are unreadable, unlistable, unexecutable, even with read = host",
          "[userns][fs]") {
  if (!sandbox_available()) return;
  TempDir ws, secrets("cordon-ll-secrets-", 65534, host_area());
  std::filesystem::create_directory(secrets / "keys");
  write_file(secrets / "keys/id", "private key\n");
  write_file(secrets / "token", "tok\n");
  write_file(secrets / "tool", "#!/bin/sh\necho ran\n", 0755);
  write_file(secrets / "ok", "fine\n");
  write_file(ws / "blocked-in-ws", "ws secret\n");
  if (is_root())
    for (auto f : {"keys", "keys/id", "token", "tool", "ok"})
      (void)!::chown((secrets / f).c_str(), 65534, 65534);
  REQUIRE(::symlink((secrets / "token").c_str(), (ws / "alias").c_str()) == 0);
  auto policy = base_policy(ws.path(), "");
  auto s = secrets.path().string();
  policy.filesystem.blocked = {s + "/keys", s + "/token", s + "/tool", ws / "blocked-in-ws"};
  const std::string attempts =
      tries({"cat " + s + "/ok", "cat " + s + "/token", "cat alias", "ls " + s + "/keys",
             "cat " + s + "/keys/id", s + "/tool", "cat /proc/self/root" + s + "/token",
             "cat blocked-in-ws", "cp " + s + "/token copy"});
  const std::string expected = "yes\nno\nno\nno\nno\nno\nno\nno\nno\n";
  SECTION("read = host") {
    policy.filesystem.read_host = true;
    CHECK(sh(policy, ws, attempts) == expected);
  }
  SECTION("confined reads that include the blocked paths' directory") {
    policy.filesystem.read.push_back(s);
    CHECK(sh(policy, ws, attempts) == expected);
  }
  SECTION("the masks cannot be removed, replaced or opened up") {
    policy.filesystem.read_host = true;
    CHECK(sh(policy, ws,
             tries({"umount " + s + "/token", "chmod 644 blocked-in-ws", "rm blocked-in-ws",
                    "mv blocked-in-ws x", "echo x > blocked-in-ws", "touch " + s + "/keys/new"})) ==
          "no\nno\nno\nno\nno\nno\n");
    CHECK(read_file(ws / "blocked-in-ws") == "ws secret\n");
  }
}

TEST_CASE("fs: a blocked file's other names (hard links) are masked too", "[userns][fs]") {
  if (!sandbox_available()) return;
  TempDir ws, area("cordon-ll-links-", 65534, host_area());
  write_file(area / "key", "private key\n");
  write_file(area / "tool", "#!/bin/sh\necho ran\n", 0755);
  write_file(area / "ok", "fine\n");
  REQUIRE(::link((area / "key").c_str(), (area / "key-again").c_str()) == 0);
  REQUIRE(::link((area / "tool").c_str(), (area / "tool-again").c_str()) == 0);
  REQUIRE(::link((area / "ok").c_str(), (area / "ok-again").c_str()) == 0);
  auto a = area.path().string();
  auto policy = base_policy(ws.path(), "");
  policy.filesystem.read.push_back(a);
  const std::string attempts = tries({"cat " + a + "/ok-again", "cat " + a + "/key-again",
                                      "cat " + a + "/key", a + "/tool-again", a + "/tool"});
  SECTION("unblocked, every name reads and runs") {
    CHECK(sh(policy, ws, attempts) == "yes\nyes\nyes\nyes\nyes\n");
  }
  SECTION("blocked by one name, no name reads or runs") {
    policy.filesystem.blocked = {a + "/key"};
    policy.process.blocked_commands = {a + "/tool"};
    CHECK(sh(policy, ws, attempts) == "yes\nno\nno\nno\nno\n");
  }
  SECTION("a name in a writable directory cannot be masked: refused, naming it") {
    std::filesystem::create_directory(area / "drop");
    REQUIRE(::link((area / "key").c_str(), (area / "drop/planted").c_str()) == 0);
    policy.filesystem.write.push_back(a + "/drop");
    policy.filesystem.blocked = {a + "/key"};
    auto out = sh(policy, ws, "cat " + a + "/drop/planted");
    CHECK(out.find("CRD1007") != std::string::npos);
    CHECK(out.find(a + "/drop/planted") != std::string::npos);
    CHECK(out.find("private key") == std::string::npos);
  }
}

TEST_CASE("fs: blocked programs cannot be executed under any name", "[userns][fs]") {
  if (!sandbox_available()) return;
  TempDir ws, bin("cordon-ll-bin-");
  write_file(bin / "mytool", "#!/bin/sh\necho mytool\n", 0755);
  write_file(bin / "other", "#!/bin/sh\necho other\n", 0755);
  REQUIRE(::symlink("mytool", (bin / "mytool-alias").c_str()) == 0);
  auto policy = base_policy(ws.path(), "");
  policy.filesystem.read.push_back(bin.path().string());
  policy.process.blocked_commands = {"mytool", "su"};
  CaptureSink sink;
  auto plan =
      make_plan(policy, ws.path(),
                {"/bin/sh", "-c",
                 tries({"other", "mytool", bin / "mytool", "mytool-alias", "sh " + bin / "mytool",
                        "cp " + bin / "mytool" + " x", "su -c true"})});
  plan.env["PATH"] = bin.path().string() + ":/usr/bin:/bin";
  auto r = backend().run(plan, sink);
  CHECK(r.exit_code == 0);
  CHECK(sink.out == "yes\nno\nno\nno\nno\nno\nno\n");
  SECTION("and the same program runs when it is not blocked") {
    plan.policy.process.blocked_commands = {"su"};
    plan.requirements = derive_requirements(plan.policy);
    CaptureSink again;
    backend().run(plan, again);
    CHECK(again.out.substr(0, 8) == "yes\nyes\n");
  }
}

TEST_CASE("fs: a busybox masked for a blocked applet is refused naming the command it provides",
          "[userns][fs]") {
  if (!sandbox_available()) return;
  std::string busybox;
  for (const char* bb : {"/usr/bin/busybox", "/bin/busybox"})
    if (busybox.empty() && ::access(bb, X_OK) == 0) busybox = bb;
  if (!needs(!busybox.empty(), "no busybox on this host (apt-get install busybox-static)")) return;
  TempDir ws;
  auto policy = base_policy(ws.path(), "");
  policy.process.blocked_commands = {"pkexec", "su"};
  CaptureSink sink;
  auto r = backend().run(make_plan(policy, ws.path(), {busybox, "true"}), sink);
  REQUIRE(r.error);
  CHECK(r.error->code() == "CRD4005");
  CHECK(r.error->message().find("'su'") != std::string::npos);
  CHECK(r.error->message().find("pkexec") == std::string::npos);  // not one busybox provides
  CHECK(r.exit_code == 126);
  SECTION("and runs when no command it provides is blocked") {
    policy.process.blocked_commands = {"pkexec"};
    CaptureSink again;
    auto ok = backend().run(make_plan(policy, ws.path(), {busybox, "true"}), again);
    CHECK_FALSE(ok.error);
    CHECK(ok.exit_code == 0);
  }
  SECTION("a program the command cannot execute for another reason keeps its own error") {
    write_file(ws / "plain", "#!/bin/sh\ntrue\n", 0644);
    CaptureSink again;
    auto no = backend().run(make_plan(policy, ws.path(), {ws / "plain"}), again);
    REQUIRE(no.error);
    CHECK(no.error->code() == "CRD5005");
  }
}

TEST_CASE("fs: allowed_commands is refused, since the loader would bypass it", "[userns][fs]") {
  if (!sandbox_available()) return;
  // Landlock checks EXECUTE at execve, not at mmap(PROT_EXEC): `ld.so /usr/bin/id` would run id.
  CHECK_FALSE(backend().probe().proves("fs.exec.confine"));
  CHECK(backend().probe().evidence("fs.exec.confine").find("dynamic loader") != std::string::npos);
  TempDir ws;
  auto policy = base_policy(ws.path(), "");
  CaptureSink sink;
  auto allowed = run_sh(policy, ws.path(), "true", sink);
  CHECK_FALSE(allowed.error);
  CHECK(allowed.exit_code == 0);
  policy.process.allowed_commands = {"sh", "cat"};
  auto refused = run_sh(policy, ws.path(), "true", sink);
  REQUIRE(refused.error);
  CHECK(refused.error->code() == "CRD1001");
  CHECK(refused.error->message().find("fs.exec.confine") != std::string::npos);
}

TEST_CASE("fs: /proc shows only the sandbox's processes", "[userns][fs]") {
  if (!sandbox_available()) return;
  TempDir ws;
  auto policy = base_policy(ws.path(), "");
  auto me = std::to_string(::getpid());
  auto out = sh(policy, ws,
                "ls /proc | grep -c '^[0-9]*$'; " +
                    tries({"test -e /proc/" + me, "kill -0 " + me, "kill -0 1"}) +
                    "kill -KILL 1 2>/dev/null; sleep 0.1; test -e /proc/1/stat && echo survived");
  // The init, the shell, ls and grep at most; the host's processes are not there.
  CHECK(std::stoi(out) <= 4);
  std::istringstream lines(out.substr(out.find('\n') + 1));
  std::string own, signal_host, signal_keeper, keeper;
  std::getline(lines, own);
  std::getline(lines, signal_host);
  std::getline(lines, signal_keeper);
  std::getline(lines, keeper);
  CHECK(own == "no");
  CHECK(signal_host == "no");
  // The keeper (pid 1) is the sandbox's own. Landlock's signal scope (ABI >= 6) keeps the
  // command from signalling it at all; without the scope an unprivileged caller's command may
  // (same uid), but as its namespace's init the keeper ignores a SIGKILL from inside.
  if (cordon::landlock::landlock_abi() >= 6) CHECK(signal_keeper == "no");
  CHECK(keeper == "survived");
}

TEST_CASE("fs: the workspace is writable only when a write grant covers it", "[userns][fs]") {
  if (!sandbox_available()) return;
  TempDir ws;
  write_file(ws / "given.txt", "given\n");
  auto policy = base_policy(ws.path(), "");
  const std::string script =
      tries({"touch new.txt", "sh -c 'echo more >> given.txt'", "rm given.txt"}) + "cat given.txt";
  SECTION("write = [] : readable, not writable, nothing changed") {
    policy.filesystem.write.clear();
    CHECK(sh(policy, ws, script) == "no\nno\nno\ngiven\n");
    CHECK(read_file(ws / "given.txt") == "given\n");
  }
  SECTION("the workspace granted: written") { CHECK(sh(policy, ws, script) == "yes\nyes\nyes\n"); }
  SECTION("an ancestor granted: written") {
    policy.filesystem.write = {ws.path().parent_path().string()};
    CHECK(sh(policy, ws, tries({"touch new.txt"})) == "yes\n");
  }
}
