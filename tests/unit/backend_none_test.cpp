// The none backend with real processes: limits, environment, HOME, timeouts, output cap, exit
// statuses — the allowed side and the refused side.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <catch2/catch.hpp>
#include <cordon/backend_none.hpp>
#include <cordon/sdk/capabilities.hpp>

#include <chrono>
#include <fstream>
#include <thread>

#include "runtime_test_support.hpp"

using namespace cordon;
using namespace std::chrono_literals;
using cordon::test::Collect;
using cordon::test::has;

namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "cordon-ws-XXXXXX").string();
    path = ::mkdtemp(t.data());
  }
  ~TempDir() { fs::remove_all(path); }
};

struct NoneFixture {
  std::unique_ptr<Backend> backend = make_none_backend({"none", nullptr, {}});
  TempDir ws;
  Plan plan;
  Collect out;
  NoneFixture() {
    plan.workspace = ws.path;
    plan.env = {{"PATH", "/usr/local/bin:/usr/bin:/bin"}, {"LANG", "C.UTF-8"}};
    plan.host_home = "/nonexistent-host-home";
    plan.requirements = {{"env.grant", "always"}};
  }
  RunResult run(std::vector<std::string> argv) {
    plan.argv = std::move(argv);
    return backend->run(plan, out);
  }
  RunResult sh(const std::string& script) { return run({"/bin/sh", "-c", script}); }
};

bool alive(pid_t pid) { return ::kill(pid, 0) == 0; }

pid_t read_pid(const fs::path& file) {
  std::ifstream in(file);
  pid_t pid = 0;
  in >> pid;
  return pid;
}

}  // namespace

TEST_CASE("none: runs argv, streams both outputs, returns the exit code", "[none]") {
  NoneFixture f;
  auto r = f.sh("echo out; echo err >&2; pwd; exit 3");
  CHECK_FALSE(r.error);
  CHECK(r.exit_code == 3);
  CHECK(r.cli_status() == 3);
  CHECK(f.out.out == "out\n" + f.ws.path.string() + "\n");
  CHECK(f.out.err == "err\n");
}

TEST_CASE("none: argv is not a shell", "[none]") {
  NoneFixture f;
  auto r = f.run({"/bin/echo", "$HOME", ";", "rm", "-rf", "*"});
  CHECK(r.exit_code == 0);
  CHECK(f.out.out == "$HOME ; rm -rf *\n");
}

TEST_CASE("none: CPU time is measured, split, and what it cannot measure is left out", "[none]") {
  NoneFixture f;
  auto r = f.sh("i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done");
  CHECK(r.exit_code == 0);
  REQUIRE(r.cpu_user_seconds);
  REQUIRE(r.cpu_system_seconds);
  CHECK(*r.cpu_user_seconds > 0);
  CHECK(r.cpu_seconds == *r.cpu_user_seconds + *r.cpu_system_seconds);
  // No group holds the command: no sandbox-wide peak, no count of processes.
  CHECK_FALSE(r.peak_memory_bytes);
  CHECK_FALSE(r.processes_started);
}

TEST_CASE("none: the command sees only the granted environment and a private HOME", "[none][env]") {
  ::setenv("CORDON_TEST_SECRET", "leak", 1);
  NoneFixture f;
  f.plan.requirements = {{"env.grant", "always"}, {"home.private", "filesystem.home"}};
  auto r = f.run({"/usr/bin/env"});
  ::unsetenv("CORDON_TEST_SECRET");
  REQUIRE(r.exit_code == 0);
  CHECK_FALSE(has(f.out.out, "CORDON_TEST_SECRET"));
  CHECK(has(f.out.out, "LANG=C.UTF-8\n"));
  auto home_at = f.out.out.find("HOME=");
  REQUIRE(home_at != std::string::npos);
  std::string home = f.out.out.substr(home_at + 5, f.out.out.find('\n', home_at) - home_at - 5);
  CHECK(has(home, "cordon-home-"));
  CHECK_FALSE(fs::exists(home));  // removed after the run
  int lines = static_cast<int>(std::count(f.out.out.begin(), f.out.out.end(), '\n'));
  CHECK(lines == 3);  // PATH, LANG, HOME: nothing else
  REQUIRE(r.report.size() == 2);
  CHECK(r.report[1].capability == "home.private");
  CHECK(has(r.report[1].mechanism, "mode 0700, removed after the run"));
}

TEST_CASE("none: the private HOME is empty, 0700 and writable", "[none][env]") {
  NoneFixture f;
  auto r = f.sh("ls -A \"$HOME\" | wc -l; stat -c %a \"$HOME\"; touch \"$HOME/x\" && echo wrote");
  CHECK(r.exit_code == 0);
  CHECK(f.out.out == "0\n700\nwrote\n");
  f.plan.policy.filesystem.home = HomeMode::host;
  f.out = {};
  f.sh("echo $HOME");
  CHECK(f.out.out == "/nonexistent-host-home\n");
}

TEST_CASE("none: rlimits bound open files, CPU time and file size", "[none][limits]") {
  NoneFixture f;
  SECTION("open files") {
    f.plan.policy.limits.max_open_files = 16;
    f.sh("ulimit -n; exec 9</dev/null && echo fd9; exec 20</dev/null && echo fd20");
    CHECK(has(f.out.out, "16\nfd9\n"));
    CHECK_FALSE(has(f.out.out, "fd20"));
  }
  SECTION("cpu seconds") {
    f.plan.policy.limits.cpu_seconds = 1;
    auto start = std::chrono::steady_clock::now();
    auto r = f.sh("while :; do :; done");
    CHECK((r.signal == SIGKILL || r.signal == SIGXCPU));
    CHECK(std::chrono::steady_clock::now() - start < 10s);
    f.out = {};
    r = f.sh("echo quick");
    CHECK(r.exit_code == 0);
  }
  SECTION("file size") {
    f.plan.policy.limits.max_file_size_mb = 1;
    auto r =
        f.sh("head -c 500000 /dev/zero > small && echo small-ok; head -c 2000000 /dev/zero > big");
    CHECK(has(f.out.out, "small-ok"));
    CHECK(fs::file_size(f.ws.path / "big") <= 1024 * 1024);
    CHECK((r.signal == SIGXFSZ || r.exit_code != 0));
  }
}

TEST_CASE("none: the deadline kills the command", "[none][timeout]") {
  NoneFixture f;
  f.plan.requirements = {{"limit.timeout", "limits.timeout"}};
  f.plan.deadline = std::chrono::steady_clock::now() + 300ms;
  auto start = std::chrono::steady_clock::now();
  auto r = f.run({"sleep", "30"});
  CHECK(r.timed_out);
  CHECK(r.cli_status() == 124);
  CHECK(r.signal == SIGTERM);
  CHECK(std::chrono::steady_clock::now() - start < 3s);
  REQUIRE(r.report.size() == 1);
  CHECK(has(r.report[0].mechanism, "SIGKILL to every descendant"));
}

TEST_CASE("none: a command that ignores SIGTERM is killed after the grace period",
          "[none][timeout]") {
  NoneFixture f;
  // Long enough for the shell to set its trap on a loaded machine: a SIGTERM before it ends
  // the shell at once, which is not the case under test.
  constexpr auto kDeadline = 2s;
  auto start = std::chrono::steady_clock::now();
  f.plan.deadline = start + kDeadline;
  auto r = f.sh("trap '' TERM; echo $$ > pid; while :; do sleep 0.05; done");
  auto took = std::chrono::steady_clock::now() - start;
  CHECK(r.timed_out);
  CHECK(r.signal == SIGKILL);
  CHECK(took >= kDeadline + kNoneKillGrace);
  CHECK(took < kDeadline + kNoneKillGrace + 5s);
  CHECK_FALSE(alive(read_pid(f.ws.path / "pid")));
}

TEST_CASE("none: a setsid() escapee dies at the deadline", "[none][timeout]") {
  NoneFixture f;
  // The escapee must have written its pid before the deadline, however slow the machine.
  f.plan.deadline = std::chrono::steady_clock::now() + 3s;
  auto r = f.sh("setsid sh -c 'trap \"\" TERM HUP; echo $$ > escapee; exec sleep 30' & sleep 30");
  CHECK(r.timed_out);
  pid_t escapee = read_pid(f.ws.path / "escapee");
  REQUIRE(escapee > 0);
  CHECK_FALSE(alive(escapee));
}

TEST_CASE("none: nothing outlives the command, double-forked daemons included", "[none]") {
  NoneFixture f;
  auto start = std::chrono::steady_clock::now();
  auto r = f.sh(
      "(setsid sh -c 'echo $$ > daemon; exec sleep 30' &); sleep 30 & "
      "while [ ! -s daemon ]; do sleep 0.01; done; echo started");
  CHECK(r.exit_code == 0);
  CHECK(f.out.out == "started\n");
  CHECK(std::chrono::steady_clock::now() - start < 5s);  // the background sleep held stdout
  CHECK_FALSE(alive(read_pid(f.ws.path / "daemon")));
  REQUIRE(r.notes.size() == 1);
  CHECK(has(r.notes[0], "outlived the command and were killed"));
}

namespace {

// Raises `level` on `token` once `file` (written by the command when it is ready) exists.
std::thread stop_when_ready(std::shared_ptr<StopToken> token, fs::path file,
                            StopToken::Level level) {
  return std::thread([token, file, level] {
    for (int i = 0; i < 500 && !fs::exists(file); ++i) std::this_thread::sleep_for(10ms);
    token->request(level);
  });
}

bool any_note(const RunResult& r, const std::string& needle) {
  for (const auto& n : r.notes)
    if (has(n, needle)) return true;
  return false;
}

}  // namespace

TEST_CASE("none: a stop request terminates the command, which may finish cleanly", "[none][stop]") {
  NoneFixture f;
  f.plan.stop = std::make_shared<StopToken>();
  f.plan.deadline = std::chrono::steady_clock::now() + 10s;  // a request ignored ends here
  auto asker = stop_when_ready(f.plan.stop, f.ws.path / "ready", StopToken::Level::terminate);
  auto r = f.sh("trap 'echo cleaned up; exit 5' TERM; touch ready; while :; do sleep 0.05; done");
  asker.join();
  CHECK(r.exit_code == 5);
  CHECK(f.out.out == "cleaned up\n");
  CHECK_FALSE(r.timed_out);
  CHECK(r.notes.empty());
}

TEST_CASE("none: a kill request ends a command that ignores SIGTERM, and its tree",
          "[none][stop]") {
  NoneFixture f;
  f.plan.stop = std::make_shared<StopToken>();
  f.plan.deadline = std::chrono::steady_clock::now() + 10s;  // a request ignored ends here
  auto asker = stop_when_ready(f.plan.stop, f.ws.path / "ready", StopToken::Level::kill);
  auto start = std::chrono::steady_clock::now();
  auto r = f.sh(
      "trap '' TERM; setsid sh -c 'echo $$ > escapee; exec sleep 30' & "
      "while [ ! -s escapee ]; do sleep 0.01; done; touch ready; while :; do sleep 0.05; done");
  asker.join();
  CHECK(std::chrono::steady_clock::now() - start < 5s);
  CHECK(r.signal == SIGKILL);
  CHECK_FALSE(r.timed_out);
  CHECK(any_note(r, "stopped: every process"));
  pid_t escapee = read_pid(f.ws.path / "escapee");
  REQUIRE(escapee > 0);
  CHECK_FALSE(alive(escapee));
}

TEST_CASE("none: without a stop request the command runs to its end", "[none][stop]") {
  NoneFixture f;
  f.plan.stop = std::make_shared<StopToken>();
  auto r = f.sh("sleep 0.3; echo done");
  CHECK(r.exit_code == 0);
  CHECK(f.out.out == "done\n");
  CHECK(r.notes.empty());
}

TEST_CASE("none: the command cannot signal or re-limit its supervisor", "[none][timeout]") {
  NoneFixture f;
  // Signal 0 probes permission without harm, whether or not the guard works.
  auto r = f.sh(
      "kill -0 $$ && echo self; kill -0 $PPID 2>/dev/null || echo no-supervisor; "
      "kill -0 -1 2>/dev/null || echo no-everyone; "
      "prlimit --pid $PPID --cpu=0 2>/dev/null || echo no-prlimit");
  CHECK(r.exit_code == 0);
  CHECK(f.out.out == "self\nno-supervisor\nno-everyone\nno-prlimit\n");
}

TEST_CASE("none: killing the supervisor fails, so its setsid() child still dies",
          "[none][timeout]") {
  NoneFixture f;
  auto r = f.sh(
      "setsid sh -c 'echo $$ > escapee; exec sleep 30' & "
      "while [ ! -s escapee ]; do sleep 0.01; done; kill -9 $PPID; echo kill=$?");
  CHECK(r.exit_code == 0);
  CHECK(has(f.out.out, "kill=1"));
  CHECK_FALSE(r.error);
  pid_t escapee = read_pid(f.ws.path / "escapee");
  REQUIRE(escapee > 0);
  CHECK_FALSE(alive(escapee));
}

TEST_CASE("none: output over the cap keeps head and tail", "[none][output]") {
  NoneFixture f;
  f.plan.policy.limits.max_output_bytes = 1000;
  auto r = f.sh("i=0; while [ $i -lt 2000 ]; do echo line$i; i=$((i+1)); done");
  CHECK(r.stdout_truncated);
  CHECK_FALSE(r.stderr_truncated);
  CHECK(r.stdout_bytes > 10000);
  CHECK(f.out.out.rfind("line0\nline1\n", 0) == 0);
  CHECK(has(f.out.out, "bytes omitted; head and tail kept]"));
  CHECK(f.out.out.substr(f.out.out.size() - 9) == "line1999\n");
  CHECK(f.out.out.size() < 1200);
  f.out = {};
  r = f.sh("echo short");
  CHECK_FALSE(r.stdout_truncated);
  CHECK(f.out.out == "short\n");
}

TEST_CASE("none: stdin comes from the plan or /dev/null", "[none]") {
  NoneFixture f;
  f.plan.stdin_data = std::string(200000, 'z');  // more than a pipe holds
  f.run({"wc", "-c"});
  CHECK(f.out.out == "200000\n");
  f.plan.stdin_data.reset();
  f.out = {};
  auto r = f.run({"cat"});
  CHECK(r.exit_code == 0);
  CHECK(f.out.out.empty());
}

TEST_CASE("none: only descriptors 0, 1 and 2 reach the command", "[none]") {
  int leaked = ::open("/dev/null", O_RDONLY);  // deliberately without O_CLOEXEC
  REQUIRE(leaked > 2);
  NoneFixture f;
  f.sh("ls /proc/$$/fd");
  ::close(leaked);
  CHECK(f.out.out == "0\n1\n2\n");
}

TEST_CASE("none: not found is 127, not executable is 126", "[none]") {
  NoneFixture f;
  SECTION("not found on the granted PATH") {
    auto r = f.run({"cordon-no-such-program"});
    REQUIRE(r.error);
    CHECK(r.error->code() == "CRD5004");
    CHECK(r.error->message() == "program 'cordon-no-such-program' not found");
    CHECK(r.cli_status() == 127);
  }
  SECTION("a file without execute permission") {
    std::ofstream(f.ws.path / "script") << "#!/bin/sh\necho hi\n";
    auto r = f.run({"./script"});
    REQUIRE(r.error);
    CHECK(r.error->code() == "CRD5005");
    CHECK(r.error->message() == "program './script' is not executable: Permission denied");
    CHECK(r.cli_status() == 126);
    fs::permissions(f.ws.path / "script", fs::perms::owner_exec, fs::perm_options::add);
    f.out = {};
    auto ok = f.run({"./script"});
    CHECK_FALSE(ok.error);
    CHECK(f.out.out == "hi\n");
  }
}

TEST_CASE("none: death by signal is 128+n", "[none]") {
  NoneFixture f;
  auto r = f.sh("kill -TERM $$");
  CHECK(r.signal == SIGTERM);
  CHECK(r.cli_status() == 128 + SIGTERM);
}

TEST_CASE("none: a policy that denies the network or confines files is refused", "[none]") {
  NoneFixture f;
  f.plan.requirements = {{"env.grant", "always"},
                         {"fs.write.confine", "filesystem.write (1 path)"},
                         {"net.deny", "network.allow = false"}};
  auto r = f.run({"/bin/echo", "must not run"});
  REQUIRE(r.error);
  CHECK(r.error->code() == "CRD1001");
  CHECK(r.error->message() ==
        "backend 'none' cannot prove:\n"
        "  fs.write.confine (filesystem.write (1 path)): a plain child process writes wherever "
        "the invoking user can\n"
        "  net.deny (network.allow = false): a plain child process shares the host's network");
  CHECK(f.out.out.empty());
}

TEST_CASE("none: the probe proves what it enforces and nothing else", "[none]") {
  auto b = make_none_backend({"none", nullptr, {}});
  const auto& p = b->probe();
  CHECK(p.available);
  for (auto id : {"env.grant", "home.private", "limit.files", "limit.cpu", "limit.file_size",
                  "limit.timeout"})
    CHECK(p.proves(id));
  for (auto id : {"fs.read.confine", "fs.write.confine", "net.deny", "limit.memory",
                  "limit.processes", "proc.isolate", "ipc.isolate"})
    CHECK_FALSE(p.proves(id));
  CHECK(p.proves("identity.unprivileged") == (::geteuid() != 0));
  if (::geteuid() == 0)
    CHECK(p.evidence("identity.unprivileged") ==
          "cordon runs as uid 0: the command would run as root");
  for (auto id : cap::all()) CHECK(p.evidence(id) != "not known to this backend");
}
