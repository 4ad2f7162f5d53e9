// Identity, both ways: the command is an ordinary user without capabilities, also under root.
#include <sys/stat.h>
#include <unistd.h>

#include "support.hpp"

using namespace cordon;
using namespace cordon::landlock::test;

TEST_CASE("identity: no capabilities, no_new_privs, seccomp in force", "[userns][identity]") {
  if (!sandbox_available()) return;
  TempDir ws;
  CaptureSink sink;
  auto r = run_sh(base_policy(ws.path(), ""), ws.path(),
                  "grep -E '^(CapInh|CapPrm|CapEff|CapAmb|NoNewPrivs|Seccomp):' /proc/self/status"
                  " | tr -s '\\t ' ' '",
                  sink);
  CHECK(r.exit_code == 0);
  CHECK(sink.out ==
        "CapInh: 0000000000000000\nCapPrm: 0000000000000000\nCapEff: 0000000000000000\n"
        "CapAmb: 0000000000000000\nNoNewPrivs: 1\nSeccomp: 2\n");
}

TEST_CASE("identity: the caller's uid unprivileged, the workspace's owner or nobody under root",
          "[userns][identity]") {
  if (!sandbox_available()) return;
  TempDir ws;
  CaptureSink sink;
  run_sh(base_policy(ws.path(), ""), ws.path(), "id -u; id -G", sink);
  if (!is_root()) {
    CHECK(sink.out.substr(0, sink.out.find('\n')) == std::to_string(::getuid()));
    return;
  }
  CHECK(sink.out == "65534\n65534\n");  // TempDir gives the workspace to 65534 under root
  TempDir owned("cordon-ll-owned-", 4321);
  CaptureSink other;
  run_sh(base_policy(owned.path(), ""), owned.path(), "id -u; id -G", other);
  CHECK(other.out == "4321\n4321\n");
}

TEST_CASE("identity: under root the command cannot use root's files", "[userns][identity][root]") {
  if (!sandbox_available()) return;
  if (!needs_root()) return;
  TempDir ws, area("cordon-ll-rootfiles-", 0, host_area());
  write_file(area / "root-only", "secret\n", 0600);
  write_file(area / "public", "public\n", 0644);
  auto policy = base_policy(ws.path(), "");
  policy.filesystem.read.push_back(area.path().string());
  CaptureSink sink;
  run_sh(policy, ws.path(),
         "cat " + area / "public" + "; cat " + area / "root-only" +
             " || echo denied; "
             "cat /etc/shadow >/dev/null 2>&1 || echo shadow-denied",
         sink);
  CHECK(sink.out == "public\ndenied\nshadow-denied\n");
}

TEST_CASE("identity: a workspace the sandbox's user cannot enter is refused with CRD1003",
          "[userns][identity][root]") {
  if (!sandbox_available()) return;
  if (!needs_root()) return;
  TempDir ws("cordon-ll-private-", 0);
  ::chmod(ws.path().c_str(), 0700);
  CaptureSink sink;
  auto r = run_sh(base_policy(ws.path(), ""), ws.path(), "echo ran", sink);
  REQUIRE(r.error);
  CHECK(r.error->code() == "CRD1003");
  CHECK(r.error->message().find("workspace") != std::string::npos);
  CHECK(r.error->hint().find("65534") != std::string::npos);
  CHECK(sink.out.empty());
}
