// The network: loopback TCP, UDP and IPv6 to listeners the test opens on the host, port rules,
// and unix sockets (path and abstract) of host daemons. Every denial is also checked from the
// host side: the listener must have received nothing.
#include <sys/stat.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include "cordon_run.hpp"
#include "host.hpp"
#include "probes.hpp"
#include "process.hpp"

using namespace escape;

namespace {

/// A connection refused by an empty network namespace, an unreachable network, or a Landlock
/// TCP rule (EACCES).
const std::set<std::string> kConnectDenied{"ECONNREFUSED", "ENETUNREACH",   "EACCES",
                                           "EPERM",        "EADDRNOTAVAIL", "ETIMEDOUT"};

PolicySpec with_network(const Scratch& s, bool allow) {
  auto p = confined(s.root());
  p.net_allow = allow;
  return p;
}

PolicySpec with_ports(const Scratch& s, std::vector<int> connect, std::vector<int> bind = {}) {
  auto p = confined(s.root());
  p.net_allow = false;
  p.connect_ports = std::move(connect);
  p.bind_ports = std::move(bind);
  return p;
}

/// A port that is free on the host right now.
int free_port() {
  TcpListener l("127.0.0.1");
  return l.port();
}

/// TCP to a host listener at `address`: denied under network.allow = false, allowed under true.
void check_tcp_both_ways(const std::string& address) {
  Scratch s;
  TcpListener host(address);
  std::string port = std::to_string(host.port());
  std::vector<std::string> args{"tcp", address, port, "denied-hello"};
  // A container's loopback is its own whatever network.allow says, so no policy reaches the
  // host's: on docker the allowed side is TCP within the sandbox, in the same run.
  if (on_docker()) args.insert(args.end(), {"selftcp", address});
  auto denied = run_probe(s, with_network(s, false), "netprobe", args);
  INFO(denied.describe());
  CHECK_THAT(denied.line("tcp " + address + " " + port), IsErr(kConnectDenied));
  CHECK_FALSE(host.accept_message(300).has_value());
  if (on_docker()) {
    CHECK_THAT(denied.line("selftcp " + address), IsOk());
    return;
  }

  auto allowed =
      run_probe(s, with_network(s, true), "netprobe", {"tcp", address, port, "allowed-hello"});
  INFO(allowed.describe());
  CHECK_THAT(allowed.line("tcp " + address + " " + port), IsOk());
  CHECK(host.accept_message(2000) == std::optional<std::string>("allowed-hello"));
}

/// connect_ports opens exactly the listed port at `address`.
void check_connect_ports(const std::string& address) {
  Scratch s;
  TcpListener open(address), closed(address);
  std::string p_open = std::to_string(open.port()), p_closed = std::to_string(closed.port());
  auto ran = run_probe(s, with_ports(s, {open.port()}), "netprobe",
                       {"tcp", address, p_open, "through-open-port", "tcp", address, p_closed,
                        "through-closed-port"});
  INFO(ran.describe());
  CHECK_THAT(ran.line("tcp " + address + " " + p_open), IsOk());
  CHECK(open.accept_message(2000) == std::optional<std::string>("through-open-port"));
  CHECK_THAT(ran.line("tcp " + address + " " + p_closed), IsErr({"EACCES"}));
  CHECK_FALSE(closed.accept_message(300).has_value());
}

}  // namespace

TEST_CASE("escape: loopback TCP to a host listener follows network.allow",
          "[escape][userns][net][tcp][docker]") {
  check_tcp_both_ways("127.0.0.1");
}

TEST_CASE("escape: IPv6 loopback TCP to a host listener follows network.allow",
          "[escape][userns][net][tcp][ipv6][docker]") {
  ESCAPE_REQUIRE_ENV(ipv6_loopback_available(), "the host has no IPv6 loopback (::1)");
  check_tcp_both_ways("::1");
}

// Not on docker: plain docker has no per-port egress filter, so it refuses net.ports (CRD1001).
TEST_CASE("escape: connect_ports opens exactly the listed TCP port",
          "[escape][userns][net][tcp][ports]") {
  check_connect_ports("127.0.0.1");
}

// Not on docker: it refuses net.ports (CRD1001).
TEST_CASE("escape: connect_ports opens exactly the listed TCP port over IPv6",
          "[escape][userns][net][tcp][ports][ipv6]") {
  ESCAPE_REQUIRE_ENV(ipv6_loopback_available(), "the host has no IPv6 loopback (::1)");
  check_connect_ports("::1");
}

TEST_CASE("escape: UDP to a host port follows network.allow",
          "[escape][userns][net][udp][docker]") {
  Scratch s;
  UdpReceiver host("127.0.0.1");
  std::string port = std::to_string(host.port());
  std::vector<std::string> args{"udp", "127.0.0.1", port, "denied-datagram"};
  // On docker, as for TCP: the allowed side is a datagram within the sandbox.
  if (on_docker()) args.insert(args.end(), {"selfudp", "127.0.0.1"});
  auto denied = run_probe(s, with_network(s, false), "netprobe", args);
  INFO(denied.describe());
  // A datagram into an empty namespace may "succeed" locally; what matters is where it lands.
  CHECK_THAT(denied.line("udp 127.0.0.1 " + port), IsOk() || IsErr(kConnectDenied));
  CHECK_FALSE(host.receive(500).has_value());
  if (on_docker()) {
    CHECK_THAT(denied.line("selfudp 127.0.0.1"), IsOk());
    return;
  }

  auto allowed = run_probe(s, with_network(s, true), "netprobe",
                           {"udp", "127.0.0.1", port, "allowed-datagram"});
  INFO(allowed.describe());
  CHECK_THAT(allowed.line("udp 127.0.0.1 " + port), IsOk());
  CHECK(host.receive(2000) == std::optional<std::string>("allowed-datagram"));
}

// Not on docker: it refuses net.ports (CRD1001).
TEST_CASE("escape: UDP does not slip past a TCP-only connect_ports rule",
          "[escape][userns][net][udp][ports]") {
  Scratch s;
  TcpListener tcp("127.0.0.1");
  UdpReceiver udp("127.0.0.1");
  std::string tport = std::to_string(tcp.port()), uport = std::to_string(udp.port());
  // connect_ports keeps the host network, where Landlock's TCP rules say nothing about UDP.
  auto ran =
      run_probe(s, with_ports(s, {tcp.port(), udp.port()}), "netprobe",
                {"tcp", "127.0.0.1", tport, "tcp-ok", "udp", "127.0.0.1", uport, "udp-escape"});
  INFO(ran.describe());
  CHECK_THAT(ran.line("tcp 127.0.0.1 " + tport), IsOk());
  CHECK(tcp.accept_message(2000) == std::optional<std::string>("tcp-ok"));
  CHECK_FALSE(udp.receive(500).has_value());
  CHECK_THAT(ran.line("udp 127.0.0.1 " + uport),
             IsErr({"EPERM", "EACCES", "EAFNOSUPPORT", "ENETUNREACH", "EPROTONOSUPPORT"}));
}

// Not on docker: it refuses net.ports (CRD1001).
TEST_CASE("escape: bind_ports opens exactly the listed port for listening",
          "[escape][userns][net][bind][ports]") {
  Scratch s;
  int allowed = free_port(), other = free_port();
  REQUIRE(allowed != other);
  auto ran = run_probe(
      s, with_ports(s, {}, {allowed}), "netprobe",
      {"bind", "127.0.0.1", std::to_string(allowed), "bind", "127.0.0.1", std::to_string(other)});
  INFO(ran.describe());
  CHECK_THAT(ran.line("bind 127.0.0.1 " + std::to_string(allowed)), IsOk());
  CHECK_THAT(ran.line("bind 127.0.0.1 " + std::to_string(other)), IsErr({"EACCES"}));
}

TEST_CASE("escape: a host unix socket outside the policy cannot be reached",
          "[escape][userns][net][unix][docker]") {
  Scratch s;
  UnixListener daemon(UnixListener::Kind::path, s.unlisted() + "/daemon.sock");
  UnixListener mine(UnixListener::Kind::path, s.ws() + "/mine.sock");
  auto ran = run_probe(s, confined(s.root()), "netprobe",
                       {"unix", s.ws() + "/mine.sock", "to-workspace", "unix",
                        s.unlisted() + "/daemon.sock", "to-daemon"});
  INFO(ran.describe());
  CHECK_THAT(ran.line("unix " + s.ws() + "/mine.sock"), IsOk());
  CHECK(mine.accept_message(2000) == std::optional<std::string>("to-workspace"));
  CHECK_THAT(ran.line("unix " + s.unlisted() + "/daemon.sock"),
             IsErr({"ENOENT", "EACCES", "ECONNREFUSED", "EPERM"}));
  CHECK_FALSE(daemon.accept_message(300).has_value());
}

TEST_CASE("escape: with read = \"host\", sockets under the host's /run cannot be reached",
          "[escape][userns][net][unix][host]") {
  // /run holds the user's systemd and D-Bus sessions and container daemons' sockets; this
  // stands for them. The root and unprivileged runs share the directory (scripts/test makes
  // it; a root run makes it itself).
  const std::string shared = "/run/cordon-escape";
  if (running_as_root() && ::mkdir(shared.c_str(), 01777) == 0) ::chmod(shared.c_str(), 01777);
  ESCAPE_REQUIRE_ENV(::access(shared.c_str(), W_OK | X_OK) == 0,
                     "needs a writable /run/cordon-escape (scripts/test makes it as root)");
  Scratch s;
  std::string dir = shared + "/" + unique_marker("daemon");
  REQUIRE(::mkdir(dir.c_str(), 0755) == 0);
  std::string sock = dir + "/daemon.sock";
  {
    UnixListener daemon(UnixListener::Kind::path, sock);
    auto policy = confined(s.root());
    policy.read_host = true;
    auto denied = run_probe(s, policy, "netprobe", {"unix", sock, "to-daemon"});
    INFO(denied.describe());
    CHECK_THAT(denied.line("unix " + sock), IsErr({"ENOENT", "EACCES", "ECONNREFUSED", "EPERM"}));
    CHECK_FALSE(daemon.accept_message(300).has_value());
    // Written explicitly, the directory is there and its socket answers.
    policy.write->push_back(dir);
    auto allowed = run_probe(s, policy, "netprobe", {"unix", sock, "granted"});
    INFO(allowed.describe());
    CHECK_THAT(allowed.line("unix " + sock), IsOk());
    CHECK(daemon.accept_message(2000) == std::optional<std::string>("granted"));
  }
  ::rmdir(dir.c_str());
}

TEST_CASE("escape: host abstract unix sockets cannot be reached",
          "[escape][userns][net][unix][abstract][docker]") {
  auto name = unique_marker("cordon-escape-abstract");
  auto own = unique_marker("cordon-escape-own-abstract");
  UnixListener host(UnixListener::Kind::abstract, name);
  // Denied whatever the network policy: network namespaces separate abstract names only while
  // the network is denied; with it allowed, Landlock's scoping must still hold (ipc.isolate).
  for (bool allow : {false, true}) {
    Scratch s;
    auto ran = run_probe(s, with_network(s, allow), "netprobe",
                         {"selfabstract", own, "abstract", name, "abstract-escape"});
    INFO("network.allow = " << allow << "\n" << ran.describe());
    CHECK_THAT(ran.line("selfabstract " + own), IsOk());
    CHECK_THAT(ran.line("abstract " + name), IsErr({"ECONNREFUSED", "EPERM"}));
    CHECK_FALSE(host.accept_message(300).has_value());
  }
}

// Not on docker: it refuses net.ports (CRD1001).
TEST_CASE("escape: host abstract unix sockets cannot be reached with connect_ports",
          "[escape][userns][net][unix][abstract][ports]") {
  Scratch s;
  auto name = unique_marker("cordon-escape-abstract-ports");
  UnixListener host(UnixListener::Kind::abstract, name);
  TcpListener tcp("127.0.0.1");
  auto ran = run_probe(s, with_ports(s, {tcp.port()}), "netprobe",
                       {"tcp", "127.0.0.1", std::to_string(tcp.port()), "tcp-ok", "abstract", name,
                        "abstract-escape"});
  INFO(ran.describe());
  CHECK_THAT(ran.line("tcp 127.0.0.1 " + std::to_string(tcp.port())), IsOk());
  CHECK_THAT(ran.line("abstract " + name), IsErr({"ECONNREFUSED", "EPERM"}));
  CHECK_FALSE(host.accept_message(300).has_value());
}
