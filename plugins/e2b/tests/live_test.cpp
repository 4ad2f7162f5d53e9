// Runs against the local E2B stand-in: exit codes, streaming, stdin, the environment, the copied
// workspace, the network switch, timeouts and stops that end the whole tree.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "support.hpp"

using namespace cordon;
using namespace cordon::e2b::test;
using cordon::testing::TempDir;

namespace {

e2b::E2bBackend& shared_backend() {
  static auto* b = make_backend().release();
  return *b;
}

RunResult run(const Plan& plan, OutputSink& sink) { return shared_backend().run(plan, sink); }

}  // namespace

TEST_CASE("run: exit status, stdout and stderr come back, exit 0 as proto3 leaves it out") {
  if (!ready()) return;
  TempDir ws("cordon-e2b-ws-", ::geteuid());
  CaptureSink sink;
  RunResult r = run(make_plan(basic_policy(), {"sh", "-c", "printf out; printf err >&2; exit 3"},
                              ws.path().string()),
                    sink);
  INFO(code_of(r) << " " << (r.error ? r.error->what() : ""));
  CHECK(r.exit_code == 3);
  CHECK(sink.out == "out");
  CHECK(sink.err == "err");
  CaptureSink ok;
  RunResult zero = run(make_plan(basic_policy(), {"true"}, ws.path().string()), ok);
  CHECK_FALSE(zero.error);
  CHECK(zero.exit_code == 0);
  CHECK(zero.signal == 0);
  CHECK(no_sandbox_within(std::chrono::seconds(5)));
}

TEST_CASE(
    "e2b run: stdin is delivered then closed, and a command that reads it without any "
    "does not hang") {
  if (!ready()) return;
  TempDir ws("cordon-e2b-ws-", ::geteuid());
  Plan with = make_plan(basic_policy(), {"cat"}, ws.path().string());
  with.stdin_data = std::string("line one\nline two\n");
  CaptureSink a;
  CHECK(run(with, a).exit_code == 0);
  CHECK(a.out == "line one\nline two\n");
  CaptureSink b;
  auto started = std::chrono::steady_clock::now();
  RunResult r =
      run(make_plan(basic_policy(std::chrono::seconds(20)), {"cat"}, ws.path().string()), b);
  CHECK(r.exit_code == 0);
  CHECK_FALSE(r.timed_out);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(15));
}

TEST_CASE("run: the environment is the grant and a fresh private HOME, nothing else") {
  if (!ready()) return;
  TempDir ws("cordon-e2b-ws-", ::geteuid());
  Plan plan = make_plan(basic_policy(),
                        {"sh", "-c", "env; stat -c %a \"$HOME\"; ls -A \"$HOME\" | wc -l; id -u"},
                        ws.path().string());
  plan.env["GRANTED"] = "yes $(not run)";
  CaptureSink sink;
  RunResult r = run(plan, sink);
  CHECK(r.exit_code == 0);
  CHECK(sink.out.find("GRANTED=yes $(not run)") != std::string::npos);
  CHECK(sink.out.find("HOME=/tmp/cordon-home-") != std::string::npos);
  CHECK(sink.out.find("USER=") == std::string::npos);  // envd's own variables do not pass
  CHECK(sink.out.find("LOGNAME=") == std::string::npos);
  CHECK(sink.out.find("\n700\n0\n") != std::string::npos);
  CHECK(sink.out.find("\n0\n", sink.out.size() - 3) == std::string::npos);  // not root
}

TEST_CASE("run: arguments arrive byte for byte, and bytes that are not UTF-8 are refused") {
  if (!ready()) return;
  TempDir ws("cordon-e2b-ws-", ::geteuid());
  std::vector<std::string> argv = {"printf", "%s|", "; rm -rf /", "$(id)", "-n", "'\"\\", "a\nb"};
  CaptureSink sink;
  RunResult r = run(make_plan(basic_policy(), argv, ws.path().string()), sink);
  CHECK(r.exit_code == 0);
  CHECK(sink.out == "; rm -rf /|$(id)|-n|'\"\\|a\nb|");
  CaptureSink bad;
  RunResult refused = run(make_plan(basic_policy(), {"echo", "\xff\xfe"}, ws.path().string()), bad);
  CHECK(code_of(refused) == "CRD4003");
  CaptureSink dash;
  CHECK(code_of(run(make_plan(basic_policy(), {"-l"}, ws.path().string()), dash)) == "CRD4002");
}

TEST_CASE(
    "e2b run: the workspace is copied in without blocked paths, and only write paths are "
    "writable") {
  if (!ready()) return;
  TempDir ws("cordon-e2b-ws-", ::geteuid());
  std::filesystem::create_directories(ws.path() / "out");
  std::filesystem::create_directories(ws.path() / "kept");
  std::filesystem::create_directories(ws.path() / "secret");
  cordon::testing::write_file(ws / "kept/file", "kept-content");
  cordon::testing::write_file(ws / "secret/key", "TOPSECRET");
  cordon::testing::write_file(ws / "run.sh", "#!/bin/sh\necho ran\n", 0755);
  REQUIRE(::link((ws / "secret/key").c_str(), (ws / "planted").c_str()) == 0);
  Policy p = basic_policy();
  p.filesystem.write = {ws / "out"};
  p.filesystem.blocked = {ws / "secret"};
  std::string script =
      "cat kept/file; echo; ./run.sh; cat secret/key planted 2>&1; "
      "echo new > out/made && echo out-ok; echo x > kept/new 2>/dev/null || echo kept-denied";
  CaptureSink sink;
  RunResult r = run(make_plan(p, {"sh", "-c", script}, ws.path().string()), sink);
  INFO(sink.out << sink.err);
  CHECK(r.exit_code == 0);
  CHECK(sink.out.find("kept-content") != std::string::npos);
  CHECK(sink.out.find("ran") != std::string::npos);
  CHECK(sink.out.find("TOPSECRET") == std::string::npos);
  CHECK(sink.out.find("out-ok") != std::string::npos);
  CHECK(sink.out.find("kept-denied") != std::string::npos);
  bool noted = false;
  for (const auto& n : r.notes)
    noted = noted || n.find("hard link to a blocked file") != std::string::npos;
  CHECK(noted);
  CHECK_FALSE(std::filesystem::exists(ws.path() / "out/made"));  // nothing comes back unasked
}

TEST_CASE("run: the network is off unless the policy allows it") {
  if (!ready()) return;
  TempDir ws("cordon-e2b-ws-", ::geteuid());
  std::string count = "grep : /proc/net/dev | grep -vc ' lo:'";
  CaptureSink denied;
  run(make_plan(basic_policy(), {"sh", "-c", count}, ws.path().string()), denied);
  CHECK(denied.out == "0\n");
  Policy open = basic_policy();
  open.network.allow = true;
  CaptureSink allowed;
  run(make_plan(open, {"sh", "-c", count}, ws.path().string()), allowed);
  CHECK(allowed.out != "0\n");
}

TEST_CASE("run: a timeout kills the whole tree, setsid escapees included, and the sandbox") {
  if (!ready()) return;
  TempDir ws("cordon-e2b-ws-", ::geteuid());
  CaptureSink sink;
  auto started = std::chrono::steady_clock::now();
  RunResult r =
      run(make_plan(basic_policy(std::chrono::seconds(2)),
                    {"sh", "-c", "setsid sh -c 'sleep 300' & sleep 300"}, ws.path().string()),
          sink);
  CHECK(r.timed_out);
  CHECK(r.signal == 9);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(20));
  CHECK(no_sandbox_within(std::chrono::seconds(5)));
  CHECK(processes_alive() == 0);
  CaptureSink quick;
  RunResult fine =
      run(make_plan(basic_policy(std::chrono::seconds(30)), {"sleep", "0.2"}, ws.path().string()),
          quick);
  CHECK_FALSE(fine.timed_out);
  CHECK(fine.exit_code == 0);
}

TEST_CASE("run: a stop request terminates the command's group, then kills what stays") {
  if (!ready()) return;
  TempDir ws("cordon-e2b-ws-", ::geteuid());
  for (bool stubborn : {false, true}) {
    Plan plan = make_plan(
        basic_policy(),
        {"sh", "-c",
         stubborn ? "trap '' TERM; echo up; sleep 300 & wait" : "echo up; sleep 300 & wait"},
        ws.path().string());
    plan.stop = std::make_shared<StopToken>();
    // Asked for once the command runs (its pid known to cordon, its trap set), not at a guess.
    CueSink sink("up\n");
    std::thread stopper([stop = plan.stop, &sink] {
      sink.wait(std::chrono::seconds(60));
      stop->request(StopToken::Level::terminate);
      std::this_thread::sleep_for(std::chrono::seconds(2));
      stop->request(StopToken::Level::kill);
    });
    RunResult r = run(plan, sink);
    stopper.join();
    CHECK(r.signal == (stubborn ? 9 : 15));
    CHECK(no_sandbox_within(std::chrono::seconds(5)));
  }
}
