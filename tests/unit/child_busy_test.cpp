// A program file that some process holds open for writing cannot be executed (ETXTBSY). The
// toolkit waits out a holder that lets go in a moment (sdk::execve_patiently), and its
// supervisor holds none of the host's descriptors, so a file the host was writing when a run
// started can be executed while the run goes on.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>
#include <cordon/sdk/child.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "busy_file.hpp"
#include "policy_test_support.hpp"
#include "runtime_test_support.hpp"

using namespace cordon;
using namespace std::chrono_literals;

namespace {

constexpr int kScriptStatus = 7;
const char* const kScript = "#!/bin/sh\nexit 7\n";

// An executable script at `path`, closed.
void write_script(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "w");
  REQUIRE(f != nullptr);
  std::fputs(kScript, f);
  std::fclose(f);
  REQUIRE(::chmod(path.c_str(), 0755) == 0);
}

// The exit status of a child that executes `path` patiently; 100 + errno when it cannot.
int patient_exec_status(const std::string& path) {
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    char* argv[] = {const_cast<char*>(path.c_str()), nullptr};
    char* envp[] = {nullptr};
    ::_exit(100 + sdk::execve_patiently(path.c_str(), argv, envp));
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

// Says when the command has printed "up".
struct UpSink : OutputSink {
  std::atomic<bool> up{false};
  std::string out;
  void write(Stream s, std::string_view chunk) override {
    if (s != Stream::out) return;
    out += chunk;
    if (out.find("up") != std::string::npos) up = true;
  }
};

}  // namespace

TEST_CASE("sdk: a program held open for writing a moment is executed once free, not before",
          "[sdk]") {
  test::TempDir dir;
  std::string script = (dir.path() / "script").string();
  write_script(script);
  pid_t holder = testing::hold_for_writing(script, 150);
  REQUIRE(holder > 0);
  CHECK(patient_exec_status(script) == kScriptStatus);
  testing::let_go(holder);
  // A file that stays open for writing is busy, as it is to execve().
  holder = testing::hold_for_writing(script, 30000);
  REQUIRE(holder > 0);
  CHECK(patient_exec_status(script) == 100 + ETXTBSY);
  testing::let_go(holder);
}

TEST_CASE("sdk: a run's supervisor keeps no descriptor of the host's open", "[sdk]") {
  test::TempDir dir;
  std::string script = (dir.path() / "script").string();
  std::string fifo = (dir.path() / "go").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  write_script(script);
  // The host is writing the script (a descriptor without close-on-exec) when the run starts.
  int writing = ::open(script.c_str(), O_WRONLY);
  REQUIRE(writing >= 0);
  Plan plan;
  plan.argv = {"sh", "-c", "echo up; read line < \"$1\"; exec \"$2\"", "sh", fifo, script};
  plan.workspace = "/";
  plan.env = {{"PATH", "/usr/bin:/bin"}};
  sdk::ChildSpec spec = sdk::child_spec(plan, "/");
  spec.deadline = std::chrono::steady_clock::now() + 60s;
  UpSink sink;
  sdk::ChildOutcome outcome;
  std::thread run([&] { outcome = sdk::run_child(spec, sink); });
  for (int i = 0; i < 30000 && !sink.up; ++i) std::this_thread::sleep_for(1ms);
  if (!sink.up) {
    ::close(writing);
    run.join();  // the deadline ends it
    FAIL("the command never started");
  }
  // Written and closed while the run goes on: the command can execute it now.
  ::close(writing);
  int go = ::open(fifo.c_str(), O_WRONLY);
  REQUIRE(go >= 0);
  REQUIRE(::write(go, "\n", 1) == 1);
  ::close(go);
  run.join();
  REQUIRE(outcome.wait_status);
  CHECK(WIFEXITED(*outcome.wait_status));
  CHECK(WEXITSTATUS(*outcome.wait_status) == kScriptStatus);
}
