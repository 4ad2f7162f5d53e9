// cordon/sdk/seccomp.hpp: the deny-list compiled and installed in real child processes, each
// checked both ways (what the filter refuses works without it).
#include <catch2/catch.hpp>
#include <cordon/sdk/error.hpp>
#include <cordon/sdk/seccomp.hpp>

#include <sched.h>
#include <sys/personality.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <system_error>
#include <thread>
#include <vector>

using cordon::sdk::compile_denials;
using cordon::sdk::DenialOptions;

namespace {

// The exit status of a forked child that installs `filter` (none when empty) and runs `body`;
// 128 + the signal when a signal ended it, 100 when the filter could not be installed.
template <class Body>
int in_child(const std::vector<sock_filter>& filter, Body body) {
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // The test framework's handlers would report a fault as a failure and carry on testing.
    for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS}) ::signal(sig, SIG_DFL);
    if (!filter.empty() && cordon::sdk::try_install_denials(filter) != 0) ::_exit(100);
    ::_exit(body());
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// 0 when fork() works (its child exits 0), 1 when it fails with EPERM, 2 otherwise.
int try_fork() {
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  if (pid < 0) return errno == EPERM ? 1 : 2;
  int status = 0;
  return ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 2;
}

// 0 when a thread runs, 1 when it cannot be created.
int try_thread() {
  try {
    bool ran = false;
    std::thread([&ran] { ran = true; }).join();
    return ran ? 0 : 1;
  } catch (const std::system_error&) {
    return 1;
  }
}

// errno of a system call that returned -1, else 0.
int errno_of(long rc) { return rc == -1 ? errno : 0; }

}  // namespace

TEST_CASE("sdk seccomp: programs check the architecture first, variants add rules", "[sdk]") {
  std::vector<sock_filter> all = compile_denials({});
  // seccomp_data.arch (offset 4) is loaded first.
  REQUIRE(all.size() > 2);
  CHECK(all[0].code == (BPF_LD | BPF_W | BPF_ABS));
  CHECK(all[0].k == 4);
  CHECK(compile_denials({.no_subprocess = true}).size() > all.size());
  CHECK(compile_denials({.inet_stream_only = true}).size() > all.size());
  CHECK(compile_denials({.always_denied = false}).size() < all.size());
}

TEST_CASE("sdk seccomp: an empty program is refused", "[sdk]") {
  CHECK(cordon::sdk::try_install_denials({}) == EINVAL);
  try {
    cordon::sdk::install_denials({});
    FAIL("no error");
  } catch (const cordon::Error& e) {
    CHECK(e.code() == cordon::code::kIsolationFailed);
  }
}

TEST_CASE("sdk seccomp: no_subprocess refuses fork and keeps threads", "[sdk]") {
  std::vector<sock_filter> filter =
      compile_denials({.always_denied = false, .no_subprocess = true});
  auto body = [] { return try_fork() * 10 + try_thread(); };
  CHECK(in_child({}, body) == 0);       // without the filter: fork and thread
  CHECK(in_child(filter, body) == 10);  // with it: fork fails with EPERM, the thread runs
  // The same through the throwing install (the test process's child is single-threaded).
  CHECK(in_child({}, [&filter] {
          try {
            cordon::sdk::install_denials(filter);
          } catch (const cordon::Error&) {
            return 100;
          }
          return try_fork() * 10 + try_thread();
        }) == 10);
}

TEST_CASE("sdk seccomp: no_subprocess makes clone3 ENOSYS", "[sdk]") {
#ifdef SYS_clone3
  std::vector<sock_filter> filter =
      compile_denials({.always_denied = false, .no_subprocess = true});
  // A null clone_args of size 0 is EINVAL to a kernel that has clone3 (Linux 5.3).
  auto body = [] { return errno_of(::syscall(SYS_clone3, nullptr, 0)); };
  int unfiltered = in_child({}, body);
  if (unfiltered == ENOSYS) {
    SUCCEED("this kernel has no clone3");
    return;
  }
  CHECK(unfiltered == EINVAL);
  CHECK(in_child(filter, body) == ENOSYS);
#else
  SUCCEED("no clone3 on this architecture");
#endif
}

TEST_CASE("sdk seccomp: no_subprocess refuses vfork", "[sdk]") {
  std::vector<sock_filter> filter = compile_denials({.no_subprocess = true});
  auto body = [] {
    pid_t pid = ::vfork();
    if (pid == 0) ::_exit(0);
    if (pid < 0) return errno == EPERM ? 1 : 2;
    int status = 0;
    return ::waitpid(pid, &status, 0) == pid ? 0 : 2;
  };
  CHECK(in_child({}, body) == 0);
  CHECK(in_child(filter, body) == 1);
}

TEST_CASE("sdk seccomp: the always-denied calls fail with EPERM, others work", "[sdk]") {
  std::vector<sock_filter> filter = compile_denials({});
  // unshare(0) and a personality query succeed unprivileged; setns(-1) is EBADF unfiltered.
  auto unshare_none = [] { return errno_of(::unshare(0)); };
  auto setns_bad = [] { return errno_of(::setns(-1, 0)); };
  auto allowed = [] { return ::getpid() > 0 && errno_of(::personality(0xffffffff)) == 0 ? 0 : 1; };
  CHECK(in_child({}, unshare_none) == 0);
  CHECK(in_child(filter, unshare_none) == EPERM);
  CHECK(in_child({}, setns_bad) == EBADF);
  CHECK(in_child(filter, setns_bad) == EPERM);
  CHECK(in_child({}, allowed) == 0);
  CHECK(in_child(filter, allowed) == 0);
  // Threads and processes are still allowed without no_subprocess.
  CHECK(in_child(filter, [] { return try_fork() * 10 + try_thread(); }) == 0);
}

TEST_CASE("sdk seccomp: another system call ABI kills the process", "[sdk]") {
#if defined(__x86_64__)
  std::vector<sock_filter> filter = compile_denials({});
  // getpid through the i386 ABI (int 0x80, number 20). Kernels may not deliver it at all
  // (ia32_emulation=0, no CONFIG_IA32_EMULATION): the unfiltered child says whether this one does.
  auto getpid32 = [] {
    long rc = 20;
    asm volatile("int $0x80" : "+a"(rc) : : "memory", "r8", "r9", "r10", "r11");
    return rc == ::getpid() ? 0 : 1;
  };
  int unfiltered = in_child({}, getpid32);
  INFO("i386 getpid without the filter: status " << unfiltered);
  int filtered = in_child(filter, getpid32);
  if (unfiltered == 0)
    CHECK(filtered == 128 + SIGSYS);
  else  // refused by the host itself: killed first by the filter, or refused as on the host
    CHECK((filtered == 128 + SIGSYS || filtered == unfiltered));
  // getpid with the x32 bit enters through the 64-bit entry, where seccomp sees it whether or
  // not the kernel has x32: killed on every host.
  auto getpid_x32 = [] { return ::syscall(0x40000000 | SYS_getpid) == ::getpid() ? 0 : 1; };
  CHECK(in_child(filter, getpid_x32) == 128 + SIGSYS);
#else
  SUCCEED("no second system call ABI tested on this architecture");
#endif
}
