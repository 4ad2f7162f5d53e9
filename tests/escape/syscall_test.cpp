// The system calls a sandboxed command never needs and attackers love, each attempted by the
// sysprobe program inside the sandbox (must fail with EPERM from the seccomp filter) and on the
// host by the same user (must get further than that: an argument error or success), so that the
// EPERM is the sandbox's doing. "control" calls in the same run must keep working.
#include <catch2/catch.hpp>

#include "cordon_run.hpp"
#include "probes.hpp"

using namespace escape;

namespace {

/// How the host answers without a sandbox.
enum class Host {
  reachable,  ///< any caller gets past the permission check (argument error or success)
  cap_gated,  ///< needs a capability: only root gets past the permission check (a kernel
              ///< without the call answers ENOSYS to anyone)
};

/// Attempts `call` on the host and in the sandbox and checks both answers.
void check_denied(const std::string& call, Host host_kind,
                  const std::set<std::string>& denied = {"EPERM"}) {
  Scratch s;
  auto host = run_on_host("sysprobe", {"control", call});
  INFO("host: " << host.describe());
  REQUIRE_THAT(host.line("control"), IsOk());
  if (host_kind == Host::reachable || running_as_root()) {
    // On the host the call gets past the permission check (an argument error or success), so
    // an EPERM in the sandbox is the sandbox's doing. A host may refuse it itself (a sysctl
    // such as kernel.io_uring_disabled or kernel.kexec_load_disabled): then it cannot be told
    // apart, which is a missing prerequisite (only the sandbox's answer is checked locally).
    bool host_reaches = !IsErr({"EPERM"}).match(host.line(call));
    if (!host_reaches && in_ci()) FAIL("the host itself refuses " << call << " with EPERM");
    if (!host_reaches)
      WARN("the host itself refuses " << call << " with EPERM: only the sandbox checked");
  }
  auto ran = run_probe(s, confined(s.root()), "sysprobe", {"control", call});
  INFO("sandbox: " << ran.describe());
  CHECK_THAT(ran.line("control"), IsOk());
  CHECK_THAT(ran.line(call), IsErr(denied));
}

}  // namespace

#define ESCAPE_SECCOMP_CASE(call, kind, ...)                                       \
  TEST_CASE("escape: seccomp denies " call, "[escape][userns][seccomp][docker]") { \
    check_denied(call, Host::kind __VA_OPT__(, ) __VA_ARGS__);                     \
  }

ESCAPE_SECCOMP_CASE("ptrace", reachable)
ESCAPE_SECCOMP_CASE("process_vm_readv", reachable)
ESCAPE_SECCOMP_CASE("mount", reachable)
ESCAPE_SECCOMP_CASE("umount2", reachable)
ESCAPE_SECCOMP_CASE("pivot_root", cap_gated)
ESCAPE_SECCOMP_CASE("unshare_user", reachable)
ESCAPE_SECCOMP_CASE("unshare_mnt", cap_gated)
ESCAPE_SECCOMP_CASE("clone_newuser", reachable)
// clone3's flags live in memory seccomp cannot read: ENOSYS makes libc fall back to clone.
ESCAPE_SECCOMP_CASE("clone3_newuser", reachable, std::set<std::string>{"EPERM", "ENOSYS"})
ESCAPE_SECCOMP_CASE("setns", reachable)
ESCAPE_SECCOMP_CASE("bpf", reachable)
ESCAPE_SECCOMP_CASE("perf_event_open", reachable)
ESCAPE_SECCOMP_CASE("userfaultfd", reachable)
ESCAPE_SECCOMP_CASE("io_uring_setup", reachable)
ESCAPE_SECCOMP_CASE("keyctl", reachable)
ESCAPE_SECCOMP_CASE("add_key", reachable)
ESCAPE_SECCOMP_CASE("kexec_load", cap_gated)
ESCAPE_SECCOMP_CASE("init_module", cap_gated)
ESCAPE_SECCOMP_CASE("finit_module", cap_gated)
ESCAPE_SECCOMP_CASE("delete_module", cap_gated)
ESCAPE_SECCOMP_CASE("open_by_handle_at", reachable)
ESCAPE_SECCOMP_CASE("tiocsti", reachable)
ESCAPE_SECCOMP_CASE("tioclinux", reachable)
ESCAPE_SECCOMP_CASE("swapon", cap_gated)
ESCAPE_SECCOMP_CASE("swapoff", cap_gated)
ESCAPE_SECCOMP_CASE("reboot", cap_gated)
ESCAPE_SECCOMP_CASE("acct", cap_gated)

TEST_CASE("escape: the seccomp filter and no_new_privs are in force",
          "[escape][userns][seccomp][docker]") {
  Scratch s;
  auto ran = run_probe(s, confined(s.root()), "lifeprobe", {"ids"});
  INFO(ran.describe());
  CHECK_THAT(ran.out(), Catch::Matchers::Contains("NoNewPrivs:\t1"));
  CHECK_THAT(ran.out(), Catch::Matchers::Contains("Seccomp:\t2"));
}
