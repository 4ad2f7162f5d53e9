// The seccomp filter, both ways: what it denies fails with the filter's errno, the rest works.
#include <csignal>

#include "support.hpp"

using namespace cordon;
using namespace cordon::landlock::test;

namespace {

std::string probe(const Policy& policy, const TempDir& ws, const std::string& what,
                  RunResult* result = nullptr) {
  CaptureSink sink;
  auto plan = make_plan(policy, ws.path(), {probe_tool(), what});
  auto r = backend().run(plan, sink);
  if (result) *result = r;
  return r.error ? r.error->render() : sink.out;
}

}  // namespace

TEST_CASE("seccomp: the deny-list fails with EPERM, ordinary calls work", "[userns][seccomp]") {
  if (!sandbox_available()) return;
  TempDir ws;
  auto policy = with_tool(ws);
  CHECK(probe(policy, ws, "getpid") == "allowed\n");
  CHECK(probe(policy, ws, "personality_query") == "allowed\n");
  CHECK(probe(policy, ws, "thread") == "allowed\n");
  CHECK(probe(policy, ws, "fork") == "allowed\n");
  for (auto denied : {"ptrace", "process_vm_readv", "mount", "unshare_user", "unshare_net", "setns",
                      "clone_newuser", "bpf", "perf_event_open", "userfaultfd", "io_uring",
                      "keyctl", "open_by_handle_at", "tiocsti", "tiocsti_high", "personality"}) {
    INFO(denied);
    CHECK(probe(policy, ws, denied) == "denied: EPERM\n");
  }
  CHECK(probe(policy, ws, "clone3") == "denied: ENOSYS\n");
  CHECK(probe(policy, ws, "vsock") == "denied: EAFNOSUPPORT\n");
  CHECK(probe(policy, ws, "packet") == "denied: EAFNOSUPPORT\n");
}

namespace {

// True when the host ran the call: the probe printed what it returned, a number >= 0.
bool delivered(const HostOutcome& host) {
  return host.exit_code == 0 && host.out.rfind("returned ", 0) == 0 &&
         std::stol(host.out.substr(9)) >= 0;
}

}  // namespace

// Some virtual machines never deliver a 32-bit entry: `int 0x80` is killed with SIGSEGV outside
// any sandbox, IA32 emulation or not. What this host does is learnt outside the sandbox first.
TEST_CASE("seccomp: system calls of a foreign architecture kill the process", "[userns][seccomp]") {
  if (!sandbox_available()) return;
  TempDir ws;
  HostOutcome host = run_on_host({probe_tool(), "i386"});
  RunResult r;
  auto out = probe(with_tool(ws), ws, "i386", &r);
  INFO("i386 on the host: " << host.describe() << "; in the sandbox: signal " << r.signal
                            << ", output '" << out << "'");
  if (delivered(host)) {
    WARN("this host delivers i386 system calls (outside the sandbox: "
         << host.describe() << "): the filter must kill the process with SIGSYS");
    CHECK(r.signal == SIGSYS);
  } else {
    // Refused by the host itself: by a signal, or an error the probe printed.
    REQUIRE((host.signal != 0 || (host.exit_code == 0 && host.out.rfind("returned -", 0) == 0)));
    WARN("this host refuses i386 system calls itself (outside the sandbox: "
         << host.describe() << "): they must be refused in the sandbox too");
    // The filter kills it first, or it ends exactly as on the host; it never returns a result.
    bool as_on_host = host.signal ? r.signal == host.signal : r.signal == 0 && out == host.out;
    CHECK((r.signal == SIGSYS || as_on_host));
    CHECK_FALSE(delivered({r.exit_code, r.signal, out}));
  }
  // An x32 call enters through the 64-bit entry, where seccomp sees it whether or not the kernel
  // has x32 (without, it returns ENOSYS outside): the filter kills it on every host.
  RunResult x32;
  out = probe(with_tool(ws), ws, "x32", &x32);
  INFO("x32 on the host: " << run_on_host({probe_tool(), "x32"}).describe() << "; in the sandbox: "
                           << "signal " << x32.signal << ", output '" << out << "'");
  CHECK(x32.signal == SIGSYS);
}

TEST_CASE("seccomp: allow_subprocess = false stops fork but not threads or the exec",
          "[userns][seccomp]") {
  if (!sandbox_available()) return;
  TempDir ws;
  auto policy = with_tool(ws);
  policy.process.allow_subprocess = false;
  CHECK(probe(policy, ws, "getpid") == "allowed\n");
  CHECK(probe(policy, ws, "thread") == "allowed\n");
  CHECK(probe(policy, ws, "fork") == "denied: EPERM\n");
  CaptureSink sink;
  auto r = run_sh(policy, ws.path(), "/bin/true && echo forked", sink);
  CHECK(sink.out.empty());
  CHECK(r.exit_code != 0);
}
