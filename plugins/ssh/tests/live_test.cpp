// Runs against the fixture's real sshd instances on 127.0.0.1 (scripts/sshd).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cordon/sdk/error.hpp>
#include <cordon/sdk/stop_token.hpp>

#include <chrono>
#include <fstream>
#include <thread>

#include "remote_line.hpp"
#include "support.hpp"

using namespace cordon;
using namespace cordon::ssh;
using namespace cordon::ssh::test;
using namespace std::chrono_literals;

TEST_CASE("ssh: arguments reach the remote program byte for byte, none runs as a command",
          "[ssh]") {
  if (!ready()) return;
  std::string nasty = "a b;$(touch /tmp/pwned-$$)`id`'\"\\\n\t*?~!#&|<>{}\xff\xfe";
  CaptureSink sink;
  auto r =
      backend().run(make_plan(shell_policy(), {"printf", "%s|", nasty, "-n", "x=y", ""}), sink);
  INFO(sink.err << (r.error ? r.error->message() : ""));
  REQUIRE_FALSE(r.error);
  CHECK(r.exit_code == 0);
  CHECK(sink.out == nasty + "|-n|x=y||");
}

TEST_CASE("ssh: exit status, stdout and stderr apart, stdin delivered then EOF", "[ssh]") {
  if (!ready()) return;
  CaptureSink sink;
  auto plan = make_plan(shell_policy(), {"sh", "-c", "cat; echo done; echo oops >&2; exit 7"});
  plan.stdin_data = std::string(200000, 'x');
  auto r = backend().run(plan, sink);
  REQUIRE_FALSE(r.error);
  CHECK(r.exit_code == 7);
  CHECK(sink.out == std::string(200000, 'x') + "done\n");
  CHECK(sink.err == "oops\n");
}

TEST_CASE("ssh: a timeout kills the remote tree, setsid() children included", "[ssh]") {
  if (!ready()) return;
  std::string m = marker("timeout");
  CaptureSink sink;
  auto r = backend().run(
      make_plan(shell_policy(1500ms),
                {"sh", "-c", "setsid sh -c 'sleep 300; : " + m + "' & sleep 200; : " + m}),
      sink);
  CHECK(r.timed_out);
  CHECK(gone_within(m, 3s));
  // The allowed twin: a command inside its time ends on its own, with its status.
  CaptureSink ok;
  auto fine = backend().run(make_plan(shell_policy(20s), {"sh", "-c", "sleep 0.2; exit 4"}), ok);
  CHECK_FALSE(fine.timed_out);
  CHECK(fine.exit_code == 4);
}

TEST_CASE("ssh: a stop request terminates the remote command, then kills what ignores it",
          "[ssh]") {
  if (!ready()) return;
  std::string m = marker("stop");
  auto stop = std::make_shared<StopToken>();
  auto plan = make_plan(
      shell_policy(), {"sh", "-c", "trap 'echo got-term; exit 3' TERM; echo up; sleep 100 & wait"});
  plan.stop = stop;
  CueSink sink("up\n");  // the trap is set: the stop is asked for then, not at a guess
  std::thread asker([stop, &sink] {
    sink.wait(30s);
    stop->request(StopToken::Level::terminate);
  });
  auto r = backend().run(plan, sink);
  asker.join();
  CHECK(sink.out.find("got-term") != std::string::npos);
  CHECK(r.exit_code == 3);

  auto killer = std::make_shared<StopToken>();
  // SIG_IGN is inherited: sleep ignores SIGTERM as well.
  auto stubborn =
      make_plan(shell_policy(), {"sh", "-c", "trap '' TERM; echo up; sleep 100; : " + m});
  stubborn.stop = killer;
  CueSink sink2("up\n");
  std::thread asker2([killer, &sink2] {
    sink2.wait(30s);
    killer->request(StopToken::Level::terminate);
    std::this_thread::sleep_for(300ms);
    killer->request(StopToken::Level::kill);
  });
  auto k = backend().run(stubborn, sink2);
  asker2.join();
  CHECK(k.signal == SIGKILL);
  CHECK(gone_within(m, 3s));
}

TEST_CASE("ssh: a changed or unknown host key is refused, naming the fingerprint", "[ssh]") {
  if (!ready()) return;
  SshBackend fresh(BackendContext{"ssh", nullptr, "/var/tmp"});
  auto changed = make_plan(shell_policy(), {"true"});
  changed.settings["known_hosts"] = fixture().dir + "/known_hosts.wrong";
  CaptureSink sink;
  auto r = fresh.run(changed, sink);
  REQUIRE(r.error);
  CHECK(code_of(r) == code::kHostKey);
  CHECK(r.error->message().find("differs") != std::string::npos);
  CHECK(r.error->message().find("SHA256:") != std::string::npos);

  cordon::testing::TempDir dir("cordon-ssh-kh-", ::geteuid());
  cordon::testing::write_file(dir / "empty", "");
  auto unknown = make_plan(shell_policy(), {"true"});
  unknown.settings["known_hosts"] = dir / "empty";
  auto u = fresh.run(unknown, sink);
  REQUIRE(u.error);
  CHECK(code_of(u) == code::kHostKey);
  CHECK(u.error->hint().find("[127.0.0.1]:" + std::to_string(fixture().ports[0])) !=
        std::string::npos);
  // The allowed twin: the recorded key is accepted.
  auto known = fresh.run(make_plan(shell_policy(), {"true"}), sink);
  CHECK_FALSE(known.error);
  CHECK(known.exit_code == 0);
}

TEST_CASE("ssh: an unreachable host and a refused login give clear errors", "[ssh]") {
  if (!ready()) return;
  SshBackend fresh(BackendContext{"ssh", nullptr, "/var/tmp"});
  CaptureSink sink;
  auto closed = make_plan(shell_policy(), {"true"});
  closed.settings["port"] = 1;  // nothing listens there
  auto c = fresh.run(closed, sink);
  REQUIRE(c.error);
  CHECK(code_of(c) == code::kServiceUnreachable);
  CHECK(c.error->message().find("127.0.0.1:1") != std::string::npos);

  cordon::testing::TempDir dir("cordon-ssh-key-", ::geteuid());
  std::string key = dir / "stranger";
  REQUIRE(std::system(("ssh-keygen -q -t ed25519 -N '' -f " + key).c_str()) == 0);
  auto stranger = make_plan(shell_policy(), {"true"});
  stranger.settings["identity"] = key;
  auto s = fresh.run(stranger, sink);
  REQUIRE(s.error);
  CHECK(code_of(s) == code::kLoginRefused);
}

TEST_CASE("ssh: the plain-shell path refuses a policy it cannot prove, naming the clause",
          "[ssh]") {
  if (!ready()) return;
  Policy confined = shell_policy();
  confined.filesystem.read_host = false;  // read confinement: nothing enforces it remotely
  CaptureSink sink;
  auto r = backend().run(make_plan(confined, {"true"}), sink);
  REQUIRE(r.error);
  CHECK(code_of(r) == code::kUnproven);
  CHECK(r.error->message().find("fs.read.confine") != std::string::npos);
  // What it proves, it reports: the allowed twin runs and says how each requirement held.
  auto ok = backend().run(make_plan(shell_policy(), {"true"}), sink);
  REQUIRE_FALSE(ok.error);
  bool timeout_reported = false;
  for (const auto& e : ok.report) timeout_reported |= e.capability == "limit.timeout";
  CHECK(timeout_reported);
}

TEST_CASE("ssh: limits hold remotely: open files, file size", "[ssh]") {
  if (!ready()) return;
  Policy p = shell_policy();
  p.limits.max_open_files = 20;
  p.limits.max_file_size_mb = 1;
  CaptureSink sink;
  auto r = backend().run(
      make_plan(p, {"sh", "-c",
                    "ulimit -n; f=$(mktemp); head -c 2000000 /dev/zero >$f 2>/dev/null; "
                    "wc -c <$f; head -c 1000 /dev/zero >$f; wc -c <$f; rm -f $f"}),
      sink);
  REQUIRE_FALSE(r.error);
  CHECK(sink.out == "20\n1048576\n1000\n");
}

TEST_CASE("ssh: a second run reuses the connection (a channel, not a handshake)", "[ssh]") {
  if (!ready()) return;
  SshBackend fresh(BackendContext{"ssh", nullptr, "/var/tmp"});
  std::string log = fixture().dir + "/host2/log";
  auto accepted = [&log] {
    std::ifstream in(log);
    int n = 0;
    for (std::string line; std::getline(in, line);)
      n += line.find("Accepted publickey") != std::string::npos;
    return n;
  };
  int before = accepted();
  CaptureSink sink;
  for (int i = 0; i < 3; ++i) {
    auto r = fresh.run(make_plan(shell_policy(), {"true"}, 1), sink);
    REQUIRE_FALSE(r.error);
  }
  CHECK(accepted() - before == 1);
}

TEST_CASE("ssh: a killed cordon leaves no remote process", "[ssh]") {
  if (!ready()) return;
  std::string m = marker("killed");
  kill_cordon_mid_run("workspace = \"/tmp\"\n",
                      "version = 1\n[filesystem]\nread = \"host\"\nwrite = \"host\"\n"
                      "home = \"host\"\n[network]\nallow = true\n[limits]\ntimeout = \"300s\"\n",
                      "/tmp", m);
  CHECK(gone_within(m, 5s));
}
