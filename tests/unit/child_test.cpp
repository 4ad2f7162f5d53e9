// The backend toolkit's supervised child (cordon/sdk/child.hpp), through its public header
// only, as a plugin uses it: the plan becomes a spec, the outcome a result, and exec failures
// keep their codes and statuses. Real processes; the none backend's tests cover the rest.
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>
#include <cordon/sdk/child.hpp>
#include <cordon/sdk/identity.hpp>
#include <cordon/sdk/seccomp.hpp>
#include <cordon/sdk/testing.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include "runtime_test_support.hpp"

using namespace cordon;
using namespace std::chrono_literals;
using cordon::test::Collect;

namespace {

Plan plan_of(std::vector<std::string> argv) {
  Plan plan;
  plan.argv = std::move(argv);
  plan.workspace = "/";
  plan.env = {{"PATH", "/usr/bin:/bin"}, {"GRANTED", "yes"}};
  return plan;
}

// Every namespace ChildSpec::namespaces knows; unprivileged, a user namespace makes the others.
int all_namespaces() {
  return CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS |
         (::geteuid() == 0 ? 0 : CLONE_NEWUSER);
}

// Whether this host lets cordon make them (unprivileged user namespaces may be disabled): when
// not, a failure under CI=true, else a warning and the test is skipped.
bool namespaces_usable() {
  Plan plan = plan_of({"true"});
  sdk::ChildSpec spec = sdk::child_spec(plan, "/");
  spec.namespaces = all_namespaces();
  Collect sink;
  RunResult r = sdk::child_result(sdk::run_child(spec, sink), plan);
  if (!r.error) return true;
  const char* ci = std::getenv("CI");
  if (ci && std::string(ci) == "true") FAIL("no namespaces here: " << r.error->message());
  WARN("skipped: no namespaces here: " << r.error->message());
  return false;
}

std::string run_out(const sdk::ChildSpec& spec, const Plan& plan) {
  Collect sink;
  RunResult r = sdk::child_result(sdk::run_child(spec, sink), plan);
  INFO(sink.err);
  CHECK_FALSE(r.error);
  return sink.out;
}

// The numeric entries of a `ls /proc` listing.
std::vector<long> pids_listed(const std::string& listing) {
  std::vector<long> pids;
  std::istringstream in(listing);
  for (std::string word; in >> word;)
    if (word.find_first_not_of("0123456789") == std::string::npos) pids.push_back(std::stol(word));
  return pids;
}

}  // namespace

TEST_CASE("sdk: exec candidates follow PATH unless the program has a slash", "[sdk]") {
  CHECK(sdk::exec_candidates("ls", "/usr/bin:/bin") ==
        std::vector<std::string>{"/usr/bin/ls", "/bin/ls"});
  CHECK(sdk::exec_candidates("./run.sh", "/usr/bin") == std::vector<std::string>{"./run.sh"});
  CHECK(sdk::exec_candidates("x", "/a::/b") == std::vector<std::string>{"/a/x", "./x", "/b/x"});
}

TEST_CASE("sdk: exec failures are CRD5004/127 when nothing is there, else CRD5005/126", "[sdk]") {
  for (int err : {ENOENT, ENOTDIR, ENAMETOOLONG}) {
    CHECK(sdk::exec_failure("x", err).code() == code::kNotFound);
    CHECK(sdk::exec_failure_status(err) == 127);
  }
  CHECK(sdk::exec_failure("x", EACCES).code() == code::kNotExecutable);
  CHECK(sdk::exec_failure_status(EACCES) == 126);
  CHECK(sdk::exec_failure("x", ENOENT, "look in the image").hint() == "look in the image");
}

TEST_CASE("sdk: a masked program is CRD4005 naming it, where it led and the blocked commands",
          "[sdk]") {
  Error exact = sdk::masked_program_failure("/bin/busybox", "", {"su", "unshare"}, true);
  CHECK(exact.code() == code::kBlockedCommand);
  CHECK(exact.message() ==
        "program '/bin/busybox' is masked in the sandbox: it is, or provides as an applet, a "
        "command blocked by process.blocked_commands ('su', 'unshare')");
  Error named = sdk::masked_program_failure("busybox", "/bin/busybox", {"su"}, false);
  CHECK(named.code() == code::kBlockedCommand);
  CHECK(named.message().find("'busybox' is masked in the sandbox ('/bin/busybox')") !=
        std::string::npos);
  CHECK(named.message().find("(one of 'su')") != std::string::npos);
  CHECK_FALSE(named.hint().empty());
}

TEST_CASE("sdk: a child gets exactly the granted environment and the plan's HOME", "[sdk]") {
  Plan plan = plan_of({"env"});
  sdk::ChildSpec spec = sdk::child_spec(plan, "/nonexistent-home");
  CHECK(spec.exec_paths == std::vector<std::string>{"/usr/bin/env", "/bin/env"});
  Collect sink;
  RunResult r = sdk::child_result(sdk::run_child(spec, sink), plan);
  REQUIRE_FALSE(r.error);
  CHECK(r.exit_code == 0);
  CHECK(sink.out.find("GRANTED=yes\n") != std::string::npos);
  CHECK(sink.out.find("HOME=/nonexistent-home\n") != std::string::npos);
  CHECK(sink.out.find("USER=") == std::string::npos);  // not granted, not inherited
}

TEST_CASE("sdk: a child inherits no ignored or caught signal, a real-time one included", "[sdk]") {
  struct sigaction caught {
  }, ignored{}, old_usr1{}, old_usr2{}, old_rtmax{};
  caught.sa_handler = [](int) {};
  ignored.sa_handler = SIG_IGN;
  ::sigaction(SIGUSR1, &caught, &old_usr1);
  ::sigaction(SIGUSR2, &ignored, &old_usr2);
  ::sigaction(SIGRTMAX, &ignored, &old_rtmax);
  // The control: this process does ignore them, so a child that kept them would show them.
  Plan self = plan_of({"cat", "/proc/self/status"});
  std::ifstream own("/proc/self/status");
  std::string own_text((std::istreambuf_iterator<char>(own)), std::istreambuf_iterator<char>());
  Collect sink;
  RunResult r = sdk::child_result(sdk::run_child(sdk::child_spec(self, "/"), sink), self);
  ::sigaction(SIGUSR1, &old_usr1, nullptr);
  ::sigaction(SIGUSR2, &old_usr2, nullptr);
  ::sigaction(SIGRTMAX, &old_rtmax, nullptr);
  auto ignored_here = [&](int sig) {
    auto at = own_text.find("SigIgn:");
    return at != std::string::npos &&
           (std::stoull(own_text.substr(at + 7), nullptr, 16) >> (sig - 1) & 1) == 1;
  };
  CHECK(ignored_here(SIGUSR2));
  CHECK(ignored_here(SIGRTMAX));
  REQUIRE_FALSE(r.error);
  CHECK(sink.out.find("\nSigIgn:\t0000000000000000\nSigCgt:\t0000000000000000\n") !=
        std::string::npos);
}

TEST_CASE("sdk: a missing program is CRD5004 with status 127, a failing one keeps its code",
          "[sdk]") {
  Plan missing = plan_of({"no-such-program-here"});
  Collect sink;
  RunResult r = sdk::child_result(sdk::run_child(sdk::child_spec(missing, "/"), sink), missing);
  REQUIRE(r.error);
  CHECK(r.error->code() == code::kNotFound);
  CHECK(r.exit_code == 127);
  Plan failing = plan_of({"sh", "-c", "exit 7"});
  r = sdk::child_result(sdk::run_child(sdk::child_spec(failing, "/"), sink), failing);
  CHECK_FALSE(r.error);
  CHECK(r.exit_code == 7);
}

TEST_CASE("sdk: the deadline and a stop end the whole tree", "[sdk]") {
  Plan plan = plan_of({"sh", "-c", "sleep 30 & sleep 30"});
  sdk::ChildSpec spec = sdk::child_spec(plan, "/");
  spec.deadline = std::chrono::steady_clock::now() + 300ms;
  spec.grace = 100ms;
  Collect sink;
  auto started = std::chrono::steady_clock::now();
  RunResult r = sdk::child_result(sdk::run_child(spec, sink), plan);
  CHECK(r.timed_out);
  CHECK(std::chrono::steady_clock::now() - started < 10s);

  plan.stop = std::make_shared<StopToken>();
  plan.stop->request(StopToken::Level::kill);  // made before the child exists: not lost
  spec = sdk::child_spec(plan, "/");
  started = std::chrono::steady_clock::now();
  r = sdk::child_result(sdk::run_child(spec, sink), plan);
  CHECK_FALSE(r.timed_out);
  CHECK_FALSE(r.error);  // the supervisor was not killed by the early request
  // A kill implies a terminate: the shell may die of the SIGTERM before the SIGKILL comes.
  CHECK((r.signal == SIGKILL || r.signal == SIGTERM));
  CHECK(std::chrono::steady_clock::now() - started < 10s);
}

TEST_CASE("sdk testing: a marked process that lingers is found, and none is left by a run",
          "[sdk]") {
  namespace t = cordon::sdk::testing;
  // The helper can fail: a marked process of our own is found, by marker and by namespace.
  std::string marker = t::unique_marker();
  std::string env_entry = "MARK=" + marker;
  pid_t pid = ::fork();
  if (pid == 0) {
    char* const argv[] = {const_cast<char*>("sleep"), const_cast<char*>("30"), nullptr};
    char* const envp[] = {env_entry.data(), nullptr};
    ::execve("/bin/sleep", argv, envp);
    ::_exit(127);
  }
  REQUIRE(pid > 0);
  auto found = t::survivors(marker, 0ms);
  for (int i = 0; i < 100 && found.empty(); ++i) {  // until it has executed
    std::this_thread::sleep_for(10ms);
    found = t::processes_marked(marker);
  }
  CHECK(found == std::vector<pid_t>{pid});
  auto members = t::pid_namespace_members(t::pid_namespace_of(::getpid()));
  CHECK(std::find(members.begin(), members.end(), pid) != members.end());
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  CHECK(t::survivors(marker).empty());

  // A run whose command leaves a background process behind ends with nothing marked alive.
  Plan plan = plan_of({"sh", "-c", "sleep 30 & exit 0"});
  plan.env["MARK"] = t::unique_marker();
  Collect sink;
  RunResult r = sdk::child_result(sdk::run_child(sdk::child_spec(plan, "/"), sink), plan);
  CHECK(r.exit_code == 0);
  CHECK(t::survivors(plan.env["MARK"]).empty());
}

TEST_CASE("sdk: a filter in the spec is the command's, and it holds", "[sdk]") {
  // The command forks (a subshell) and reports whether it could.
  Plan plan = plan_of({"sh", "-c", "(true) && echo forked || echo refused"});
  Collect free_sink;
  RunResult r = sdk::child_result(sdk::run_child(sdk::child_spec(plan, "/"), free_sink), plan);
  CHECK(free_sink.out == "forked\n");

  sdk::ChildSpec spec = sdk::child_spec(plan, "/");
  spec.filter = sdk::compile_denials({.no_subprocess = true});
  Collect denied_sink;
  r = sdk::child_result(sdk::run_child(spec, denied_sink), plan);
  REQUIRE_FALSE(r.error);  // the shell itself was executed
  CHECK(denied_sink.out.find("forked") == std::string::npos);
}

TEST_CASE("sdk: in a network namespace a listener on the host's loopback is out of reach",
          "[sdk]") {
  int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(listener >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(listener, 8) == 0);
  REQUIRE(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  std::string port = std::to_string(ntohs(addr.sin_port));
  Plan plan = plan_of(
      {"bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/" + port + " && echo connected || echo refused"});
  // Both ways: the host's network reaches the listener, the namespace's does not.
  CHECK(run_out(sdk::child_spec(plan, "/"), plan) == "connected\n");
  if (namespaces_usable()) {
    sdk::ChildSpec spec = sdk::child_spec(plan, "/");
    spec.namespaces = all_namespaces();
    CHECK(run_out(spec, plan) == "refused\n");
    spec.namespaces = CLONE_NEWNET | (::geteuid() == 0 ? 0 : CLONE_NEWUSER);
    CHECK(run_out(spec, plan) == "refused\n");
  }
  ::close(listener);
}

TEST_CASE("sdk: in a pid namespace the command runs under an init and sees no host process",
          "[sdk]") {
  Plan plan = plan_of({"sh", "-c", "echo $$; ls /proc"});
  std::string host = run_out(sdk::child_spec(plan, "/"), plan);
  auto host_pids = pids_listed(host.substr(host.find('\n') + 1));
  CHECK(host.substr(0, host.find('\n')) != "1");
  CHECK(std::count(host_pids.begin(), host_pids.end(), ::getpid()) == 1);
  if (!namespaces_usable()) return;
  sdk::ChildSpec spec = sdk::child_spec(plan, "/");
  spec.namespaces = all_namespaces();
  std::string inside = run_out(spec, plan);
  CHECK(inside.substr(0, inside.find('\n')) == "2");  // pid 1 is the toolkit's init
  auto pids = pids_listed(inside.substr(inside.find('\n') + 1));
  CHECK(std::count(pids.begin(), pids.end(), 1) == 1);
  CHECK(std::count(pids.begin(), pids.end(), 2) == 1);  // the shell
  CHECK(std::count(pids.begin(), pids.end(), ::getpid()) == 0);
  CHECK(pids.size() <= 3);  // the init, the shell and its ls
}

// A command that was pid 1 could not die of its own signal, nor of the deadline's SIGTERM.
TEST_CASE("sdk: in a pid namespace a signal ends the command and is reported as its end", "[sdk]") {
  if (!namespaces_usable()) return;
  Plan plan = plan_of({"sh", "-c", "kill -TERM $$; sleep 5; exit 3"});
  sdk::ChildSpec spec = sdk::child_spec(plan, "/");
  spec.namespaces = all_namespaces();
  Collect sink;
  RunResult r = sdk::child_result(sdk::run_child(spec, sink), plan);
  CHECK_FALSE(r.error);
  CHECK(r.signal == SIGTERM);
  // The twin: the exit status passes through the init unchanged.
  plan.argv = {"sh", "-c", "exit 3"};
  spec = sdk::child_spec(plan, "/");
  spec.namespaces = all_namespaces();
  r = sdk::child_result(sdk::run_child(spec, sink), plan);
  CHECK(r.exit_code == 3);
  CHECK(r.signal == 0);
  // A stop request's SIGTERM reaches the command: it ends before the grace is over.
  plan.argv = {"sleep", "30"};
  spec = sdk::child_spec(plan, "/");
  spec.namespaces = all_namespaces();
  spec.stop = std::make_shared<StopToken>();
  spec.stop->request(StopToken::Level::terminate);
  spec.grace = 20s;
  auto started = std::chrono::steady_clock::now();
  r = sdk::child_result(sdk::run_child(spec, sink), plan);
  CHECK(r.signal == SIGTERM);
  CHECK(std::chrono::steady_clock::now() - started < 10s);
}

TEST_CASE("sdk: in a pid namespace the deadline ends the whole tree, pid 1 included", "[sdk]") {
  if (!namespaces_usable()) return;
  namespace t = cordon::sdk::testing;
  Plan plan = plan_of({"sh", "-c", "sleep 30 & setsid sleep 30 & sleep 30"});
  plan.env["MARK"] = t::unique_marker();
  sdk::ChildSpec spec = sdk::child_spec(plan, "/");
  spec.namespaces = all_namespaces();
  spec.deadline = std::chrono::steady_clock::now() + 300ms;
  spec.grace = 200ms;
  Collect sink;
  auto started = std::chrono::steady_clock::now();
  RunResult r = sdk::child_result(sdk::run_child(spec, sink), plan);
  CHECK_FALSE(r.error);
  CHECK(r.timed_out);
  CHECK(std::chrono::steady_clock::now() - started < 10s);
  CHECK(t::survivors(plan.env["MARK"]).empty());

  // A command that leaves a background process behind takes it with it.
  plan.argv = {"sh", "-c", "setsid sleep 30 & exit 0"};
  spec = sdk::child_spec(plan, "/");
  spec.namespaces = all_namespaces();
  r = sdk::child_result(sdk::run_child(spec, sink), plan);
  CHECK(r.exit_code == 0);
  CHECK(t::survivors(plan.env["MARK"]).empty());
}

TEST_CASE("sdk: in an IPC namespace the host's SysV shared memory is out of sight", "[sdk]") {
  key_t key = static_cast<key_t>(0x43520000 | (::getpid() & 0xffff));
  int id = ::shmget(key, 4096, IPC_CREAT | 0600);
  REQUIRE(id >= 0);
  Plan plan = plan_of({"cat", "/proc/sysvipc/shm"});
  std::string key_text = std::to_string(key);  // right-aligned in a 10-wide column
  CHECK(run_out(sdk::child_spec(plan, "/"), plan).find(key_text) != std::string::npos);
  if (namespaces_usable()) {
    sdk::ChildSpec spec = sdk::child_spec(plan, "/");
    spec.namespaces = all_namespaces();
    CHECK(run_out(spec, plan).find(key_text) == std::string::npos);
  }
  ::shmctl(id, IPC_RMID, nullptr);
}

TEST_CASE("sdk: in a user namespace the command keeps its uid and holds no capability", "[sdk]") {
  if (::geteuid() == 0 || !namespaces_usable()) return;  // root makes no user namespace
  Plan plan = plan_of({"sh", "-c", "id -u; grep CapEff /proc/self/status"});
  sdk::ChildSpec spec = sdk::child_spec(plan, "/");
  spec.namespaces = all_namespaces();
  CHECK(run_out(spec, plan) == std::to_string(::geteuid()) + "\nCapEff:\t0000000000000000\n");
}

TEST_CASE("sdk: the spec's user is the command's, with no supplementary group", "[sdk]") {
  Plan plan = plan_of({"sh", "-c", "id -u; id -g; id -G"});
  sdk::ChildSpec spec = sdk::child_spec(plan, "/");
  spec.user = sdk::ChildUser{sdk::kNobody, sdk::kNobody};
  Collect sink;
  RunResult r = sdk::child_result(sdk::run_child(spec, sink), plan);
  if (::geteuid() != 0) {
    // Unprivileged, the switch fails before exec: the command did not run.
    REQUIRE(r.error);
    CHECK(r.error->code() == code::kIsolationFailed);
    CHECK(r.error->message().find("uid 65534") != std::string::npos);
    CHECK(sink.out.empty());
    return;
  }
  REQUIRE_FALSE(r.error);
  CHECK(sink.out == "65534\n65534\n65534\n");
  CHECK(run_out(sdk::child_spec(plan, "/"), plan).rfind("0\n0\n", 0) == 0);  // without: root
  // With the other namespaces too (root makes no user namespace for them).
  if (namespaces_usable()) {
    spec.namespaces = all_namespaces();
    CHECK(run_out(spec, plan) == "65534\n65534\n65534\n");
  }
}
