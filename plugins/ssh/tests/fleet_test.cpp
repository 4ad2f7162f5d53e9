// Fleets against the fixture's two sshd (two hosts with their own keys) and a port nobody
// listens on (a host that is down).
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cordon/sdk/error.hpp>

#include <chrono>
#include <thread>

#include "support.hpp"

using namespace cordon;
using namespace cordon::ssh;
using namespace cordon::ssh::test;
using namespace std::chrono_literals;

namespace {

// A port on 127.0.0.1 that was free a moment ago: a host that refuses connections.
int dead_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

std::string host(int port) { return "127.0.0.1:" + std::to_string(port); }

boost::json::object fleet(std::vector<int> ports) {
  auto s = settings(0);
  s.erase("host");
  s.erase("port");
  boost::json::array hosts;
  for (int p : ports) hosts.push_back(boost::json::string(host(p)));
  s["hosts"] = std::move(hosts);
  s["cordon"] = "off";  // the plain-shell path: the same proofs on both hosts
  return s;
}

std::string ran_on(const RunResult& r) {
  for (const auto& n : r.notes)
    if (n.rfind("ran on ", 0) == 0) return n;
  return "";
}

}  // namespace

TEST_CASE("ssh: a fleet with a host down still runs, on a host that is up, and says so",
          "[ssh][fleet]") {
  if (!ready()) return;
  SshBackend b(BackendContext{"ssh", nullptr, "/var/tmp"});
  int down = dead_port();
  auto plan = make_plan(shell_policy(), {"echo", "hi"});
  plan.settings = fleet({down, fixture().ports[1]});
  CaptureSink sink;
  auto r = b.run(plan, sink);
  INFO((r.error ? r.error->message() : ""));
  REQUIRE_FALSE(r.error);
  CHECK(sink.out == "hi\n");
  CHECK(ran_on(r).find(host(fixture().ports[1])) != std::string::npos);
  bool noted = false;
  for (const auto& n : r.notes)
    noted |= n.rfind("fleet: passed over ", 0) == 0 && n.find(host(down)) != std::string::npos;
  CHECK(noted);

  // What `cordon backends` shows: each host's proof, or why it was skipped.
  auto probe = b.probe_for(plan.settings);
  CHECK(probe.available);
  std::string facts;
  for (const auto& f : probe.facts) facts += f + "\n";
  CHECK(facts.find(host(down) + ": skipped") != std::string::npos);
  CHECK(facts.find(host(fixture().ports[1]) + ": proves") != std::string::npos);
}

TEST_CASE("ssh: a fleet with every host down refuses the run, naming each host", "[ssh][fleet]") {
  if (!ready()) return;
  SshBackend b(BackendContext{"ssh", nullptr, "/var/tmp"});
  int d1 = dead_port(), d2 = dead_port();
  auto plan = make_plan(shell_policy(), {"true"});
  plan.settings = fleet({d1, d2});
  CaptureSink sink;
  auto r = b.run(plan, sink);
  REQUIRE(r.error);
  CHECK(r.error->message().find(host(d1)) != std::string::npos);
  CHECK(r.error->message().find(host(d2)) != std::string::npos);
}

TEST_CASE("ssh: a fleet sends a run to its least busy host", "[ssh][fleet]") {
  if (!ready()) return;
  SshBackend b(BackendContext{"ssh", nullptr, "/var/tmp"});
  auto settings = fleet({fixture().ports[0], fixture().ports[1]});
  auto slow = make_plan(shell_policy(), {"sleep", "2"});
  slow.settings = settings;
  auto quick = make_plan(shell_policy(), {"true"});
  quick.settings = settings;
  REQUIRE(b.probe_for(settings).available);  // both hosts probed before the race starts

  RunResult first;
  std::thread busy([&] {
    CaptureSink s;
    first = b.run(slow, s);
  });
  std::this_thread::sleep_for(700ms);
  CaptureSink s2;
  auto second = b.run(quick, s2);
  busy.join();
  REQUIRE_FALSE(first.error);
  REQUIRE_FALSE(second.error);
  CHECK(ran_on(first).find(host(fixture().ports[0])) != std::string::npos);
  CHECK(ran_on(second).find(host(fixture().ports[1])) != std::string::npos);
  // Idle again: the settings' order decides.
  CaptureSink s3;
  auto third = b.run(quick, s3);
  CHECK(ran_on(third).find(host(fixture().ports[0])) != std::string::npos);
}
