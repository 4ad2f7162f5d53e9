// Network enforcement, both ways: the empty network namespace and Landlock's TCP port rules.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cordon/sdk/capabilities.hpp>

#include "support.hpp"

using namespace cordon;
using namespace cordon::landlock::test;

namespace {

// A listening socket of the host (this test process), closed when it goes.
struct Listener {
  int fd = -1;
  int port = 0;
  explicit Listener(int family) {
    fd = ::socket(family, SOCK_STREAM, 0);
    if (family == AF_INET6) {
      sockaddr_in6 a{};
      a.sin6_family = AF_INET6;
      a.sin6_addr = in6addr_loopback;
      ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    } else {
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    }
    ::listen(fd, 16);
    sockaddr_storage got{};
    socklen_t len = sizeof got;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&got), &len);
    port = ntohs(family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&got)->sin6_port
                                    : reinterpret_cast<sockaddr_in*>(&got)->sin_port);
  }
  // A unix socket: abstract when `path` starts with '@'.
  explicit Listener(const std::string& path) {
    fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::memcpy(a.sun_path, path.c_str(), path.size());
    if (path[0] == '@') a.sun_path[0] = '\0';
    socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size());
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), len);
    ::listen(fd, 16);
    if (path[0] != '@') ::chmod(path.c_str(), 0777);
  }
  ~Listener() { ::close(fd); }
};

// A TCP port no socket of the host is bound to now.
int free_port() {
  Listener probe(AF_INET);
  return probe.port;
}

// Whether the host has an IPv6 loopback address to listen on; else says so (a failure under
// CI=true), and the IPv6 probes are left out.
bool ipv6_loopback() {
  int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  a.sin6_addr = in6addr_loopback;
  bool ok = fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  if (fd >= 0) ::close(fd);
  return needs(ok, "an IPv6 loopback address (::1) on the host; the IPv6 probes are left out");
}

// Runs the probe tool once per line ("" lines are left out); its output, or cordon's error.
std::string probes(const Policy& policy, const TempDir& ws, std::vector<std::string> lines) {
  std::string script;
  for (const auto& l : lines)
    if (!l.empty()) script += probe_tool() + " " + l + "; ";
  CaptureSink sink;
  auto r = run_sh(policy, ws.path(), script, sink);
  return r.error ? r.error->render() : sink.out;
}

}  // namespace

TEST_CASE("net: denied means no host network, not even loopback, but inside loopback works",
          "[userns][net]") {
  if (!sandbox_available()) return;
  TempDir ws;
  bool ipv6 = ipv6_loopback();
  Listener v4(AF_INET), v6(ipv6 ? AF_INET6 : AF_INET);
  auto name = "@cordon-ll-" + std::to_string(::getpid());
  Listener abstract(name);
  auto out = probes(with_tool(ws), ws,
                    {"connect 127.0.0.1 " + std::to_string(v4.port),
                     ipv6 ? "connect ::1 " + std::to_string(v6.port) : "",
                     "abstract " + name.substr(1), "udp 127.0.0.1 53", "loopback 41234"});
  CHECK(out == std::string("denied: ECONNREFUSED\n") + (ipv6 ? "denied: ECONNREFUSED\n" : "") +
                   "denied: ECONNREFUSED\nallowed\nallowed\n");
  CaptureSink sink;
  run_sh(with_tool(ws), ws.path(), "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '", sink);
  CHECK(sink.out == "lo\n");
  SECTION("with network.allow = true the host listener answers") {
    auto policy = with_tool(ws);
    policy.network.allow = true;
    CHECK(probes(policy, ws, {"connect 127.0.0.1 " + std::to_string(v4.port)}) == "allowed\n");
  }
}

TEST_CASE("net: UDP datagrams never reach a host listener while the network is denied",
          "[userns][net]") {
  if (!sandbox_available()) return;
  TempDir ws;
  int udp = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(udp, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  socklen_t len = sizeof a;
  ::getsockname(udp, reinterpret_cast<sockaddr*>(&a), &len);
  auto port = std::to_string(ntohs(a.sin_port));
  auto received = [udp] {
    char buf[16];
    return ::recv(udp, buf, sizeof buf, 0) > 0;
  };
  auto policy = with_tool(ws);
  probes(policy, ws, {"udp 127.0.0.1 " + port});
  CHECK_FALSE(received());
  policy.network.allow = true;
  probes(policy, ws, {"udp 127.0.0.1 " + port});
  CHECK(received());
  ::close(udp);
}

TEST_CASE("net: a host daemon's unix socket is out of reach unless its directory is granted",
          "[userns][net]") {
  if (!sandbox_available()) return;
  TempDir ws, run("cordon-ll-run-", 65534, host_area());
  Listener daemon(run / "daemon.sock");
  auto policy = with_tool(ws);
  CHECK(probes(policy, ws, {"unix " + run / "daemon.sock"}) == "denied: ENOENT\n");
  policy.filesystem.read.push_back(run.path().string());
  CHECK(probes(policy, ws, {"unix " + run / "daemon.sock"}) == "allowed\n");
}

TEST_CASE("net: TCP ports open exactly the listed ports", "[userns][net]") {
  if (!sandbox_available()) return;
  TempDir ws;
  bool ipv6 = ipv6_loopback();
  Listener allowed(AF_INET), other(AF_INET), v6(ipv6 ? AF_INET6 : AF_INET);
  // The host's network is the sandbox's here: ports to bind are ones free on the host now.
  int bind_ok = free_port(), bind_denied = free_port();
  while (bind_denied == bind_ok) bind_denied = free_port();
  auto policy = with_tool(ws);
  policy.network.connect_ports = {static_cast<std::uint16_t>(allowed.port),
                                  static_cast<std::uint16_t>(v6.port)};
  policy.network.bind_ports = {static_cast<std::uint16_t>(bind_ok)};
  // Landlock ABI < 4 (or CORDON_LANDLOCK_MAX_ABI): no port rules, so such a policy is refused.
  if (!proven_here(cap::net_ports, true))
    return check_refused(policy, with_tool(ws), ws, cap::net_ports);
  auto out = probes(policy, ws,
                    {"connect 127.0.0.1 " + std::to_string(allowed.port),
                     ipv6 ? "connect ::1 " + std::to_string(v6.port) : "",
                     "connect 127.0.0.1 " + std::to_string(other.port), "udp 127.0.0.1 53",
                     "bind " + std::to_string(bind_ok), "bind " + std::to_string(bind_denied)});
  CHECK(out == std::string("allowed\n") + (ipv6 ? "allowed\n" : "") +
                   "denied: EACCES\ndenied: EPERM\nallowed\ndenied: EACCES\n");
}
