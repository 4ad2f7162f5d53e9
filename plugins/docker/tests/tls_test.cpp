// The TCP/TLS transport against a real TLS endpoint: a throwaway CA, server and client
// certificates made with openssl, and socat terminating TLS in front of the real daemon's unix
// socket (verifying client certificates). Both ways: the right CA and client certificate run a
// command; a wrong CA and a missing client certificate are refused with a clear CRD1005.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <curl/curl.h>

#include <thread>

#include "http.hpp"
#include "process.hpp"
#include "support.hpp"

using namespace cordon;
using namespace cordon::docker;
using namespace cordon::docker::test;
using namespace std::chrono_literals;

namespace {

std::string shell(const std::string& script) {
  escape::SpawnOptions o;
  o.argv = {"/bin/sh", "-c", script};
  auto e = escape::run_process(o);
  INFO(script << "\n" << e.out << e.err);
  REQUIRE(e.status == 0);
  return e.out;
}

// socat and openssl are there; else a skip with a warning (a failure under CI=true).
bool tools_ready() {
  escape::SpawnOptions o;
  o.argv = {"/bin/sh", "-c", "command -v socat && command -v openssl"};
  if (escape::run_process(o).status == 0) return true;
  const char* ci = std::getenv("CI");
  std::string why = "socat or openssl missing (apt-get install -y socat openssl)";
  if (ci && std::string(ci) == "true") FAIL("missing prerequisite: " << why);
  WARN("skipped: " << why);
  return false;
}

// A CA, a server certificate for 127.0.0.1 and a client certificate; and three DOCKER_CERT_PATH
// directories: good/ (the CA and the client's pair), wrong/ (another CA), nocert/ (the CA only).
void make_certificates(const TempDir& d) {
  shell("set -e; cd '" + d.path().string() +
        "'\n"
        "key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1 -out $1; }\n"
        "sign() { openssl x509 -req -in $1.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial "
        "-days 1 -out $1-cert.pem -extfile $1.ext; }\n"
        "key ca-key.pem; openssl req -x509 -new -key ca-key.pem -days 1 -subj /CN=cordon-ca "
        "-out ca.pem\n"
        "key other-key.pem; openssl req -x509 -new -key other-key.pem -days 1 -subj /CN=other "
        "-out other-ca.pem\n"
        "key server-key.pem; openssl req -new -key server-key.pem -subj /CN=127.0.0.1 "
        "-out server.csr\n"
        "printf 'subjectAltName=IP:127.0.0.1\\nextendedKeyUsage=serverAuth\\n' > server.ext\n"
        "key client-key.pem; openssl req -new -key client-key.pem -subj /CN=client "
        "-out client.csr\n"
        "printf 'extendedKeyUsage=clientAuth\\n' > client.ext\n"
        "sign server; sign client\n"
        "mkdir good wrong nocert\n"
        "cp ca.pem good/; cp other-ca.pem wrong/ca.pem; cp ca.pem nocert/\n"
        "for d in good wrong; do cp client-cert.pem $d/cert.pem; cp client-key.pem $d/key.pem; "
        "done\n");
}

// A port nothing listens on now.
int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
  ::close(fd);
  return ntohs(a.sin_port);
}

bool accepts(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

// socat terminating TLS on 127.0.0.1:port in front of the daemon's unix socket. Stopped (with
// the children it forked per connection) when it goes away, whatever the test did.
class Terminator {
 public:
  explicit Terminator(const TempDir& certs) : dir_(certs.path().string()), port_(free_port()) {
    std::string socket = kDefaultSocket;
    if (const char* s = std::getenv("CORDON_TEST_DOCKER_SOCKET"); s && *s) socket = s;
    escape::SpawnOptions o;
    std::string socat = shell("command -v socat");
    o.argv = {socat.substr(0, socat.find('\n')),
              "openssl-listen:" + std::to_string(port_) +
                  ",bind=127.0.0.1,reuseaddr,fork,cert=" + dir_ + "/server-cert.pem,key=" + dir_ +
                  "/server-key.pem,cafile=" + dir_ + "/ca.pem,verify=1",
              "unix-connect:" + socket};
    socat_ = std::make_unique<escape::Process>(o);
    for (int i = 0; i < 100 && !accepts(port_); ++i) std::this_thread::sleep_for(50ms);
  }
  ~Terminator() {
    for (pid_t pid : escape::pids_with_marker(dir_ + "/server-cert.pem"))
      if (pid != socat_->pid()) ::kill(pid, SIGKILL);
    socat_.reset();  // kills and reaps the listener
  }
  std::string host() const { return "tcp://127.0.0.1:" + std::to_string(port_); }

 private:
  std::string dir_;
  int port_;
  std::unique_ptr<escape::Process> socat_;
};

// The docker TLS variables for the length of a test.
class TlsEnv {
 public:
  TlsEnv(const std::string& cert_path, const std::string& host) {
    ::setenv("DOCKER_TLS_VERIFY", "1", 1);
    ::setenv("DOCKER_CERT_PATH", cert_path.c_str(), 1);
    ::setenv("DOCKER_HOST", host.c_str(), 1);
  }
  ~TlsEnv() {
    for (auto name : {"DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH", "DOCKER_HOST"}) ::unsetenv(name);
  }
};

Plan tls_plan(const TempDir& ws, const std::string& host, std::vector<std::string> argv) {
  auto plan = make_plan(base_policy(ws.path()), ws.path(), std::move(argv));
  plan.settings.erase("socket");
  plan.settings["host"] = host;
  return plan;
}

}  // namespace

TEST_CASE("tls: with the right CA and client certificate a run works over TCP/TLS",
          "[docker][tls]") {
  if (!docker_ready() || !tools_ready()) return;
  TempDir certs, ws;
  make_certificates(certs);
  Terminator tls(certs);
  TlsEnv env(certs / "good", tls.host());
  DockerBackend b(BackendContext{"docker", nullptr, "/var/tmp/cordon-docker-test"});
  const auto& p = b.probe();
  INFO(p.reason);
  REQUIRE(p.available);
  CHECK(p.facts.front().find(tls.host()) != std::string::npos);
  CaptureSink sink;
  auto r = b.run(tls_plan(ws, tls.host(), {"/bin/sh", "-c", "echo over tls; echo err >&2; exit 4"}),
                 sink);
  INFO((r.error ? r.error->render() : "-"));
  CHECK(r.exit_code == 4);
  CHECK(sink.out == "over tls\n");
  CHECK(sink.err == "err\n");
  CHECK(our_containers().empty());
}

TEST_CASE("tls: a daemon certificate the CA did not sign is refused, naming TLS verification",
          "[docker][tls]") {
  if (!docker_ready() || !tools_ready()) return;
  TempDir certs, ws;
  make_certificates(certs);
  Terminator tls(certs);
  TlsEnv env(certs / "wrong", tls.host());
  DockerBackend b(BackendContext{"docker", nullptr, "/var/tmp/cordon-docker-test"});
  const auto& p = b.probe();
  CHECK_FALSE(p.available);
  CHECK(p.reason.find("cannot use the docker daemon at " + tls.host() +
                      ": TLS verification of the daemon's certificate failed") == 0);
  // A run on a backend whose probe failed is refused with the probe's reason.
  CaptureSink sink;
  auto refused = b.run(tls_plan(ws, tls.host(), {"/bin/true"}), sink);
  REQUIRE(refused.error);
  CHECK(refused.error->code() == "CRD1004");
  CHECK(refused.error->message().find("TLS verification") != std::string::npos);
  // A run whose own settings reach the daemon with the wrong CA (the probe's were right).
  TlsEnv right(certs / "good", tls.host());
  DockerBackend ok(BackendContext{"docker", nullptr, "/var/tmp/cordon-docker-test"});
  REQUIRE(ok.probe().available);
  ::setenv("DOCKER_CERT_PATH", (certs / "wrong").c_str(), 1);
  auto r = ok.run(tls_plan(ws, tls.host(), {"/bin/true"}), sink);
  REQUIRE(r.error);
  CHECK(r.error->code() == "CRD1005");
  CHECK(r.error->message().find("TLS verification of the daemon's certificate failed") !=
        std::string::npos);
  CHECK(r.error->hint().find("ca.pem") != std::string::npos);
}

TEST_CASE("tls: without a client certificate the endpoint refuses, and cordon says so",
          "[docker][tls]") {
  if (!docker_ready() || !tools_ready()) return;
  TempDir certs, ws;
  make_certificates(certs);
  Terminator tls(certs);
  TlsEnv env(certs / "nocert", tls.host());
  DockerBackend b(BackendContext{"docker", nullptr, "/var/tmp/cordon-docker-test"});
  const auto& p = b.probe();
  CHECK_FALSE(p.available);
  CHECK(p.reason.find("the daemon refused the TLS connection: no client certificate was "
                      "presented") != std::string::npos);
  TlsEnv right(certs / "good", tls.host());
  DockerBackend ok(BackendContext{"docker", nullptr, "/var/tmp/cordon-docker-test"});
  REQUIRE(ok.probe().available);
  ::setenv("DOCKER_CERT_PATH", (certs / "nocert").c_str(), 1);
  CaptureSink sink;
  auto r = ok.run(tls_plan(ws, tls.host(), {"/bin/true"}), sink);
  REQUIRE(r.error);
  CHECK(r.error->code() == "CRD1005");
  CHECK(r.error->message().find("refused the TLS connection: no client certificate") !=
        std::string::npos);
}

TEST_CASE("tls: failures are named for what went wrong", "[unit][tls]") {
  CHECK(tls_reason(CURLE_PEER_FAILED_VERIFICATION, "SSL certificate problem: x", true, "/c") ==
        "TLS verification of the daemon's certificate failed: it is not signed by /c/ca.pem or "
        "does not name the host (SSL certificate problem: x)");
  CHECK(tls_reason(CURLE_RECV_ERROR, "SSL_read: tlsv13 alert certificate required", false, "/c") ==
        "the daemon refused the TLS connection: no client certificate was presented (/c has no "
        "cert.pem and key.pem) (SSL_read: tlsv13 alert certificate required)");
  CHECK(tls_reason(CURLE_SSL_CONNECT_ERROR, "getpeername() failed", true, "/c") ==
        "the daemon refused the TLS connection: it does not accept the client certificate "
        "/c/cert.pem");
  CHECK(tls_reason(CURLE_SSL_CACERT_BADFILE, "", true, "/c").find("/c/ca.pem") !=
        std::string::npos);
  CHECK(tls_reason(CURLE_COULDNT_CONNECT, "", true, "/c").empty());
  CHECK(transport_reason(CURLE_PEER_FAILED_VERIFICATION, 0).rfind("SSL ", 0) == 0);
  CHECK(transport_reason(CURLE_COULDNT_CONNECT, 111) == "connection refused");
}
