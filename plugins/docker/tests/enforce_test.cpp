// Enforcement both ways against the real daemon: files, network, limits, refusals, daemons that
// are missing or gone, and containers a killed cordon left behind.
#include <cordon/sdk/capabilities.hpp>
#include <cordon/sdk/path_guard.hpp>

#include <boost/json/parse.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include "api.hpp"
#include "container.hpp"
#include "support.hpp"

using namespace cordon;
using namespace cordon::docker;
using namespace cordon::docker::test;

TEST_CASE("fs: the host is invisible, the workspace is readable and writable", "[docker]") {
  if (!docker_ready()) return;
  TempDir ws, other("cordon-dk-other-");
  write_file(ws / "in.txt", "inside\n");
  write_file(other / "secret.txt", "host secret\n");
  auto policy = base_policy(ws.path());
  CaptureSink sink;
  auto r = run_sh(policy, ws.path(),
                  "cat in.txt; cat " + (other / "secret.txt") +
                      " 2>/dev/null || echo no-host-file; cat /etc/cordon-image; echo made > "
                      "out.txt && echo wrote",
                  sink);
  CHECK(r.exit_code == 0);
  CHECK(sink.out == "inside\nno-host-file\nthe test image's own file\nwrote\n");
  CHECK(read_file(ws / "out.txt") == "made\n");
}

TEST_CASE("fs: writes outside the workspace fail, write paths are writable", "[docker]") {
  if (!docker_ready()) return;
  TempDir ws, extra("cordon-dk-extra-");
  auto policy = base_policy(ws.path());
  policy.filesystem.write.push_back(extra.path());
  CaptureSink sink;
  auto r = run_sh(policy, ws.path(),
                  "touch /etc/x 2>/dev/null || echo ro-root; touch /var/tmp/x 2>/dev/null || "
                  "echo no-host; echo e > " +
                      (extra / "e.txt") + " && echo extra-ok",
                  sink);
  CHECK(r.exit_code == 0);
  CHECK(sink.out == "ro-root\nno-host\nextra-ok\n");
  CHECK(read_file(extra / "e.txt") == "e\n");
}

TEST_CASE("fs: a write path through a symlink planted in the workspace is refused", "[docker]") {
  if (!docker_ready()) return;
  TempDir ws, secret("cordon-dk-secret-");
  // An earlier command left `out -> <secret>` in the workspace; the daemon would follow it.
  std::filesystem::create_symlink(secret.path(), ws.path() / "out");
  auto policy = base_policy(ws.path());
  policy.filesystem.write.push_back((ws.path() / "out").string());
  CaptureSink sink;
  auto refused = run_sh(policy, ws.path(), "echo pwned > out/owned", sink);
  REQUIRE(refused.error);
  CHECK(refused.error->code() == "CRD4004");
  CHECK(sink.out.empty());
  CHECK_FALSE(std::filesystem::exists(secret.path() / "owned"));
  // The real path, granted as itself, is writable.
  policy.filesystem.write.back() = secret.path().string();
  CaptureSink ok_sink;
  auto ok = run_sh(policy, ws.path(), "echo mine > " + (secret / "mine") + " && echo ok", ok_sink);
  CHECK(ok.exit_code == 0);
  CHECK(ok_sink.out == "ok\n");
  CHECK(read_file(secret / "mine") == "mine\n");
}

TEST_CASE("fs: blocked paths inside the workspace cannot be read or listed", "[docker]") {
  if (!docker_ready()) return;
  TempDir ws;
  write_file(ws / "open.txt", "open\n");
  write_file(ws / "secret.txt", "secret\n");
  std::filesystem::create_directory(ws / "keys");
  write_file(ws / "keys/id", "key\n");
  auto policy = base_policy(ws.path());
  policy.filesystem.blocked = {ws / "secret.txt", ws / "keys"};
  CaptureSink sink;
  auto r = run_sh(policy, ws.path(),
                  "cat open.txt; cat secret.txt 2>/dev/null || echo blocked-file; ls keys "
                  "2>/dev/null || echo blocked-dir; cat keys/id 2>/dev/null || echo blocked-key",
                  sink);
  CHECK(r.exit_code == 0);
  CHECK(sink.out == "open\nblocked-file\nblocked-dir\nblocked-key\n");
  CHECK(read_file(ws / "secret.txt") == "secret\n");
}

TEST_CASE("fs: a blocked file's other names (hard links) on a mount are masked too", "[docker]") {
  if (!docker_ready()) return;
  TempDir ws, extra("cordon-dk-links-");
  write_file(extra / "key", "private key\n");
  write_file(extra / "ok", "fine\n");
  write_file(extra / "tool", "#!/bin/sh\necho ran\n", 0755);
  REQUIRE(::link((extra / "key").c_str(), (extra / "key-again").c_str()) == 0);
  REQUIRE(::link((extra / "tool").c_str(), (extra / "tool-again").c_str()) == 0);
  auto policy = base_policy(ws.path());
  auto plan = make_plan(policy, ws.path(),
                        {"/bin/sh", "-c",
                         "cat /opt/more/ok; cat /opt/more/key-again 2>/dev/null || echo no-read; "
                         "/opt/more/tool-again 2>/dev/null || echo no-exec"});
  plan.settings["mounts"] = boost::json::array{extra.path().string() + ":/opt/more:ro"};
  SECTION("unblocked, every name reads and runs") {
    CaptureSink sink;
    auto r = backend().run(plan, sink);
    INFO(sink.err);
    CHECK(r.exit_code == 0);
    CHECK(sink.out == "fine\nprivate key\nran\n");
  }
  SECTION("blocked by one name, no name reads or runs") {
    plan.policy.filesystem.blocked = {extra / "key"};
    plan.policy.process.blocked_commands = {"/opt/more/tool"};  // as the container sees it
    plan.requirements = derive_requirements(plan.policy);
    CaptureSink sink;
    auto r = backend().run(plan, sink);
    INFO((r.error ? r.error->render() : sink.err));
    CHECK(r.exit_code == 0);
    CHECK(sink.out == "fine\nno-read\nno-exec\n");
  }
}

TEST_CASE("fs: a blocked directory too large to check for hard links is noted", "[docker]") {
  if (!docker_ready()) return;
  TempDir ws;
  std::filesystem::create_directory(ws / "many");
  for (std::size_t i = 0; i <= kOtherNamesWalk; ++i)
    write_file(ws / ("many/f" + std::to_string(i)), "x\n");
  auto policy = base_policy(ws.path());
  policy.filesystem.blocked = {ws / "many"};
  CaptureSink sink;
  auto r = run_sh(policy, ws.path(), "ls many 2>/dev/null || echo blocked", sink);
  CHECK(r.exit_code == 0);
  CHECK(sink.out == "blocked\n");
  bool noted = std::any_of(r.notes.begin(), r.notes.end(), [](const std::string& n) {
    return n.find("too many entries to check each file for other names") != std::string::npos;
  });
  CHECK(noted);
}

TEST_CASE("net: only loopback when the network is denied, ports are refused", "[docker]") {
  if (!docker_ready()) return;
  TempDir ws;
  auto policy = base_policy(ws.path());
  CaptureSink sink;
  auto r = run_sh(policy, ws.path(), "ls /sys/class/net", sink);
  CHECK(r.exit_code == 0);
  CHECK(sink.out == "lo\n");
  policy.network.connect_ports = {443};
  CaptureSink refused;
  auto ports = run_sh(policy, ws.path(), "true", refused);
  REQUIRE(ports.error);
  CHECK(ports.error->code() == "CRD1001");
  CHECK(ports.error->message().find("net.ports") != std::string::npos);
}

namespace {

// False when the daemon cannot enforce `capability` (its cgroup set-up lacks the controller): the
// run must then be refused, naming it, and the case checks that instead.
bool enforced_or_refused(const Policy& policy, const TempDir& ws, std::string_view capability) {
  if (backend().probe().proves(capability)) return true;
  WARN(capability << " not proven by this daemon (" << backend().probe().evidence(capability)
                  << "): the refusal is tested instead");
  CaptureSink sink;
  auto r = run_sh(policy, ws.path(), "echo ran", sink);
  REQUIRE(r.error);
  CHECK(r.error->code() == "CRD1001");
  CHECK(r.error->message().find(capability) != std::string::npos);
  CHECK(sink.out.empty());
  return false;
}

}  // namespace

TEST_CASE("limits: the memory limit kills a hog, a small allocation fits", "[docker]") {
  if (!docker_ready()) return;
  TempDir ws;
  auto policy = base_policy(ws.path());
  policy.limits.memory_mb = 48;
  if (!enforced_or_refused(policy, ws, cap::limit_memory)) return;
  CaptureSink small, hog;
  auto fits = run_sh(policy, ws.path(), "head -c 8000000 /dev/zero > /tmp/f && echo fits", small);
  CHECK(fits.exit_code == 0);
  CHECK(small.out == "fits\n");
  auto r = run_sh(policy, ws.path(), "awk 'BEGIN{s=\"x\"; while(1) s=s s}'", hog);
  CHECK(r.signal == 9);
  bool noted = false;
  for (const auto& n : r.notes)
    noted = noted || n == "killed by the memory limit (limits.memory_mb = 48)";
  CHECK(noted);
}

TEST_CASE("limits: the pids limit stops a fork bomb, a few processes run", "[docker]") {
  if (!docker_ready()) return;
  TempDir ws;
  auto policy = base_policy(ws.path());
  policy.limits.max_processes = 8;
  if (!enforced_or_refused(policy, ws, cap::limit_processes)) return;
  CaptureSink few, bomb;
  auto ok = run_sh(policy, ws.path(), "sleep 1 & sleep 1 & sleep 1 & wait; echo ok", few);
  CHECK(ok.exit_code == 0);
  CHECK(few.out == "ok\n");
  auto r = run_sh(policy, ws.path(),
                  "n=0; for i in $(seq 30); do sleep 5 & n=$((n+1)); done 2>/dev/null; "
                  "ls /proc | grep -c '^[0-9]'",
                  bomb);
  CHECK(std::stoi(bomb.out.empty() ? "0" : bomb.out) <= 9);
}

TEST_CASE("limits: open files, CPU time and file size are rlimits", "[docker]") {
  if (!docker_ready()) return;
  TempDir ws;
  auto policy = base_policy(ws.path());
  policy.limits.max_open_files = 40;
  policy.limits.cpu_seconds = 7;
  policy.limits.max_file_size_mb = 1;
  CaptureSink sink;
  auto r = run_sh(policy, ws.path(),
                  "ulimit -n; ulimit -t; head -c 4000000 /dev/zero > big 2>/dev/null; "
                  "wc -c < big; head -c 1000 /dev/zero > small && echo small-ok",
                  sink);
  CHECK(r.exit_code == 0);
  CHECK(sink.out == "40\n7\n1048576\nsmall-ok\n");
}

TEST_CASE("image: a missing image is CRD1002 naming the pull, cordon never pulls", "[docker]") {
  if (!docker_ready()) return;
  TempDir ws;
  auto plan = make_plan(base_policy(ws.path()), ws.path(), {"true"});
  plan.settings["image"] = "cordon-test/no-such-image:0";
  CaptureSink sink;
  auto r = backend().run(plan, sink);
  REQUIRE(r.error);
  CHECK(r.error->code() == "CRD1002");
  CHECK(r.error->message().find("'cordon-test/no-such-image:0'") != std::string::npos);
  CHECK(r.error->hint().find("docker pull cordon-test/no-such-image:0") != std::string::npos);
  CHECK(r.cli_status() == 125);
}

TEST_CASE("daemon: a socket where nothing answers is a clear CRD1005", "[docker]") {
  if (!docker_ready()) return;
  TempDir ws;
  auto plan = make_plan(base_policy(ws.path()), ws.path(), {"true"});
  plan.settings["socket"] = "/nonexistent/docker.sock";
  CaptureSink sink;
  auto r = backend().run(plan, sink);
  REQUIRE(r.error);
  CHECK(r.error->code() == "CRD1005");
  CHECK(r.error->message() ==
        "no daemon answered at /nonexistent/docker.sock: no such file or directory");
}

TEST_CASE("gc: a container whose cordon died is removed by the next run", "[docker]") {
  if (!docker_ready()) return;
  Daemon daemon(resolve_endpoint("", ""));
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  auto labels = boost::json::object{
      {kRunLabel, "stale-test"}, {kPidLabel, std::to_string(child)}, {kStartLabel, "1"}};
  for (const auto& l : owner_labels())
    if (l.rfind(kHostLabel, 0) == 0) labels[kHostLabel] = l.substr(l.find('=') + 1);
  auto body = boost::json::object{
      {"Image", test_image()}, {"Cmd", boost::json::array{"true"}}, {"Labels", labels}};
  auto made = daemon.call("POST", "/containers/create", body);
  REQUIRE(made.status == 201);
  auto id = std::string(boost::json::parse(made.body).as_object().at("Id").as_string());
  auto removed = collect_stale(daemon);
  CHECK(std::any_of(removed.begin(), removed.end(), [](const std::string& line) {
    return line.find("of run 'stale-test'") != std::string::npos;
  }));
  CHECK(daemon.call("GET", "/containers/" + id + "/json").status == 404);
  // Both ways: a container of a living cordon (this process) stays.
  labels[kPidLabel] = std::to_string(::getpid());
  labels[kStartLabel] = owner_labels()[1].substr(owner_labels()[1].find('=') + 1);
  body["Labels"] = labels;
  auto live = daemon.call("POST", "/containers/create", body);
  REQUIRE(live.status == 201);
  auto live_id = std::string(boost::json::parse(live.body).as_object().at("Id").as_string());
  collect_stale(daemon);
  CHECK(daemon.call("GET", "/containers/" + live_id + "/json").status == 200);
  daemon.call("DELETE", "/containers/" + live_id + "?force=1");
}

TEST_CASE("exec: blocked programs of the image cannot run, others can", "[docker]") {
  if (!docker_ready()) return;
  TempDir ws;
  auto policy = base_policy(ws.path());
  policy.process.blocked_commands = {"cordon-blocked-tool", "sudo"};
  CaptureSink sink;
  auto r = run_sh(policy, ws.path(),
                  "cordon-allowed-tool; cordon-blocked-tool 2>/dev/null || echo blocked; "
                  "cat /usr/bin/cordon-blocked-tool 2>/dev/null || echo unreadable",
                  sink);
  CHECK(r.exit_code == 0);
  CHECK(sink.out == "cordon-allowed-tool ran\nblocked\nunreadable\n");
  CaptureSink direct;
  auto denied = backend().run(make_plan(policy, ws.path(), {"cordon-blocked-tool"}), direct);
  REQUIRE(denied.error);
  // Masked, and said so (CRD4005, as the landlock backend says it), not merely unexecutable.
  CHECK(denied.error->code() == std::string("CRD4005"));
  CHECK(denied.error->message().find("'cordon-blocked-tool'") != std::string::npos);
  CHECK(denied.exit_code == 126);
}

TEST_CASE("gc: the container of a cordon killed mid-run is collected", "[docker]") {
  if (!docker_ready()) return;
  TempDir ws;
  // The command says it runs: a running container only says its waiter does, and a cordon
  // killed before handing the waiter its input leaves a container that stops by itself.
  std::string began = ws / "began";
  auto plan = make_plan(base_policy(ws.path()), ws.path(),
                        {"/bin/sh", "-c", "touch " + began + "; exec /bin/sleep 60"});
  pid_t child = ::fork();
  if (child == 0) {
    DockerBackend b(BackendContext{"docker", nullptr, "/var/tmp/cordon-docker-test"});
    CaptureSink sink;
    b.run(plan, sink);
    ::_exit(0);
  }
  Daemon daemon(resolve_endpoint("", ""));
  auto running = [child] { return containers_made_by(child, true).size(); };
  for (int i = 0; i < 300 && ::access(began.c_str(), F_OK) != 0; ++i) ::usleep(100000);
  REQUIRE(::access(began.c_str(), F_OK) == 0);
  REQUIRE(running() == 1);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  CHECK(running() == 1);  // a killed cordon cannot remove its container
  collect_stale(daemon);
  CHECK(running() == 0);
}
