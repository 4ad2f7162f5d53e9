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

TEST_CASE("seccomp: system calls of a foreign architecture kill the process", "[userns][seccomp]") {
  if (!sandbox_available()) return;
  TempDir ws;
  RunResult r;
  probe(with_tool(ws), ws, "i386", &r);
  CHECK(r.signal == SIGSYS);
  RunResult x32;
  auto out = probe(with_tool(ws), ws, "x32", &x32);
  CHECK((x32.signal == SIGSYS || out == "denied: ENOSYS\n"));
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
