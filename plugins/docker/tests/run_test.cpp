// Runs against the real daemon through the C++ API: status, streams, stdin, environment, HOME,
// the output cap, timeouts, stop requests, and no container left behind.
#include <cordon/sdk/capabilities.hpp>

#include <algorithm>
#include <sstream>
#include <thread>

#include "support.hpp"

using namespace cordon;
using namespace cordon::docker;
using namespace cordon::docker::test;

TEST_CASE("probe: proves the container capabilities with evidence", "[docker][probe]") {
  if (!docker_ready()) return;
  const auto& p = backend().probe();
  for (auto id : {cap::fs_read_confine, cap::fs_read_block, cap::fs_write_confine, cap::net_deny,
                  cap::proc_isolate, cap::env_grant, cap::home_private, cap::identity_unprivileged,
                  cap::limit_timeout, cap::ipc_isolate, cap::limit_files, cap::limit_cpu,
                  cap::limit_file_size}) {
    INFO(id << ": " << p.evidence(id));
    CHECK(p.proves(id));
  }
  CHECK(p.evidence(cap::fs_read_confine).find("answered API 1.") != std::string::npos);
  CHECK_FALSE(p.proves(cap::net_ports));
  CHECK_FALSE(p.proves(cap::fs_exec_confine));
  CHECK(p.facts.front().rfind("docker ", 0) == 0);
}

TEST_CASE("probe: no daemon is unavailable, saying where and why", "[docker][probe]") {
  ::setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock", 1);
  DockerBackend lost(BackendContext{"docker", nullptr, "/var/tmp/cordon-docker-test"});
  const auto& p = lost.probe();
  ::unsetenv("DOCKER_HOST");
  CHECK_FALSE(p.available);
  CHECK(p.reason == "no daemon answered at /nonexistent/docker.sock: no such file or directory");
}

TEST_CASE("run: a missing program is CRD5004 (127), a non-executable one CRD5005", "[docker]") {
  if (!docker_ready()) return;
  TempDir ws;
  auto policy = base_policy(ws.path());
  write_file(ws / "data.txt", "not a program\n");
  CaptureSink a, b;
  auto missing = backend().run(make_plan(policy, ws.path(), {"no-such-program-xyz"}), a);
  REQUIRE(missing.error);
  CHECK(missing.error->code() == "CRD5004");
  CHECK(missing.cli_status() == 127);
  CHECK(a.err.empty());
  auto denied = backend().run(make_plan(policy, ws.path(), {"./data.txt"}), b);
  REQUIRE(denied.error);
  CHECK(denied.error->code() == "CRD5005");
  CHECK(denied.cli_status() == 126);
}

TEST_CASE("run: stdout and stderr stream separately, stdin is the plan's or empty", "[docker]") {
  if (!docker_ready()) return;
  TempDir ws;
  auto policy = base_policy(ws.path());
  CaptureSink sink;
  auto plan = make_plan(policy, ws.path(), {"/bin/sh", "-c", "cat; echo err >&2"});
  plan.stdin_data = std::string(300000, 'x') + "end\n";
  auto r = backend().run(plan, sink);
  CHECK(r.exit_code == 0);
  CHECK(sink.out.size() == 300004);
  CHECK(sink.out.substr(sink.out.size() - 4) == "end\n");
  CHECK(sink.err == "err\n");
  CaptureSink empty;
  CHECK(run_sh(policy, ws.path(), "cat; echo done", empty).exit_code == 0);
  CHECK(empty.out == "done\n");
}

namespace {

// Lets the command go on only once both of its first lines have reached the sink: output held
// back until the end would leave it waiting until its own give-up.
class ReleasingSink final : public OutputSink {
 public:
  explicit ReleasingSink(std::string go) : go_(std::move(go)) {}
  void write(Stream stream, std::string_view chunk) override {
    (stream == Stream::out ? out : err).append(chunk);
    if (out == "out-ready\n" && err == "err-ready\n" && !released) {
      released = true;
      write_file(go_, "");
    }
  }
  std::string out, err;
  bool released = false;

 private:
  std::string go_;
};

}  // namespace

TEST_CASE("run: output reaches the sink while the command runs", "[docker]") {
  if (!docker_ready()) return;
  TempDir ws;
  auto policy = base_policy(ws.path());
  ReleasingSink sink(ws / "go");
  auto r = backend().run(
      make_plan(policy, ws.path(),
                {"/bin/sh", "-c",
                 "echo out-ready; echo err-ready >&2; i=0; "
                 "while [ ! -e go ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i+1)); done; "
                 "[ -e go ] && echo released"}),
      sink);
  CHECK(r.exit_code == 0);
  CHECK(sink.released);
  CHECK(sink.out == "out-ready\nreleased\n");
  CHECK(sink.err == "err-ready\n");
}

TEST_CASE("run: the environment is the granted one, the image's ENV is removed", "[docker]") {
  if (!docker_ready()) return;
  TempDir ws;
  ::setenv("CORDON_TEST_SECRET", "hunter2", 1);
  auto policy = base_policy(ws.path());
  CaptureSink sink;
  auto plan = make_plan(policy, ws.path(), {"/bin/env"});
  plan.env["EXTRA"] = "1";
  auto r = backend().run(plan, sink);
  ::unsetenv("CORDON_TEST_SECRET");
  CHECK(r.exit_code == 0);
  // The daemon keeps the image's order for names it replaces: compare as a set.
  std::vector<std::string> lines;
  std::istringstream in(sink.out);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  CHECK(lines == std::vector<std::string>{"EXTRA=1", "HOME=/home/cordon", "HOSTNAME=cordon",
                                          "LANG=C.UTF-8", "PATH=/usr/local/bin:/usr/bin:/bin"});
  CHECK(sink.out.find("CORDON_IMAGE_ENV") == std::string::npos);
  bool noted = false;
  for (const auto& n : r.notes) noted = noted || n.find("CORDON_IMAGE_ENV") != std::string::npos;
  CHECK(noted);
}

TEST_CASE("run: HOME is private, empty, 0700 and writable, the user is not root", "[docker]") {
  if (!docker_ready()) return;
  TempDir ws;
  auto policy = base_policy(ws.path());
  CaptureSink sink;
  auto r = run_sh(policy, ws.path(),
                  "echo $HOME; ls -A $HOME | wc -l; stat -c %a $HOME; touch $HOME/x && echo "
                  "wrote; id -u; grep CapEff /proc/self/status",
                  sink);
  CHECK(r.exit_code == 0);
  CHECK(sink.out == "/home/cordon\n0\n700\nwrote\n65534\nCapEff:\t0000000000000000\n");
}

TEST_CASE("run: the deadline kills the container and removes it (124)", "[docker]") {
  if (!docker_ready()) return;
  TempDir ws;
  auto policy = base_policy(ws.path());
  // The deadline runs from the plan: the container's set-up counts against it, and the command
  // must have said "started" before it.
  policy.limits.timeout = std::chrono::milliseconds(3000);
  CaptureSink sink;
  auto start = std::chrono::steady_clock::now();
  auto r = run_sh(policy, ws.path(), "echo started; sleep 60 & sleep 60; echo never", sink);
  auto took = std::chrono::steady_clock::now() - start;
  CHECK(r.timed_out);
  CHECK(r.cli_status() == 124);
  CHECK(sink.out == "started\n");
  CHECK(took < std::chrono::seconds(15));
  CHECK(our_containers().empty());
  // Both ways: within the deadline the command finishes.
  CaptureSink quick;
  auto fine = run_sh(policy, ws.path(), "echo quick", quick);
  CHECK_FALSE(fine.timed_out);
  CHECK(fine.exit_code == 0);
}

TEST_CASE("run: a stop request kills the container within a poll", "[docker]") {
  if (!docker_ready()) return;
  TempDir ws;
  auto policy = base_policy(ws.path());
  auto plan = make_plan(policy, ws.path(), {"/bin/sh", "-c", "echo up; sleep 60"});
  plan.stop = std::make_shared<StopToken>();
  auto token = plan.stop;
  CueSink sink("up\n");  // asked for once the command runs, not at a guess at the set-up's length
  std::thread stopper([token, &sink] {
    sink.wait(std::chrono::seconds(30));
    token->request(StopToken::Level::kill);
  });
  auto start = std::chrono::steady_clock::now();
  auto r = backend().run(plan, sink);
  stopper.join();
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
  CHECK(r.signal == 9);
  CHECK(sink.out == "up\n");
  CHECK(our_containers().empty());
}

TEST_CASE("run: no container is left after success or failure", "[docker]") {
  if (!docker_ready()) return;
  TempDir ws;
  auto policy = base_policy(ws.path());
  CaptureSink a, b, c;
  run_sh(policy, ws.path(), "true", a);
  run_sh(policy, ws.path(), "exit 9", b);
  backend().run(make_plan(policy, ws.path(), {"no-such-program-xyz"}), c);
  CHECK(our_containers().empty());
}

TEST_CASE("run: the workspace is writable only when a write grant covers it", "[docker]") {
  if (!docker_ready()) return;
  TempDir ws;
  write_file(ws / "given.txt", "given\n");
  auto policy = base_policy(ws.path());
  const std::string script = "touch new.txt 2>/dev/null && echo yes || echo no; cat given.txt";
  CaptureSink granted;
  CHECK(run_sh(policy, ws.path(), script, granted).exit_code == 0);
  CHECK(granted.out == "yes\ngiven\n");
  policy.filesystem.write.clear();
  CaptureSink read_only;
  CHECK(run_sh(policy, ws.path(), "rm -f new.txt; " + script, read_only).exit_code == 0);
  CHECK(read_only.out == "no\ngiven\n");
  CHECK(std::filesystem::exists(ws / "new.txt"));
}
