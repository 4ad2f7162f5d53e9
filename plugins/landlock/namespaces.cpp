// Namespace creation and the facts around it.
#include "namespaces.hpp"

#include <signal.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace cordon::landlock {

namespace {

// struct clone_args up to CLONE_ARGS_SIZE_VER2 (Linux 5.7).
struct CloneArgs {
  std::uint64_t flags;
  std::uint64_t pidfd;
  std::uint64_t child_tid;
  std::uint64_t parent_tid;
  std::uint64_t exit_signal;
  std::uint64_t stack;
  std::uint64_t stack_size;
  std::uint64_t tls;
  std::uint64_t set_tid;
  std::uint64_t set_tid_size;
  std::uint64_t cgroup;
};

constexpr std::uint64_t kClonePidfd = 0x00001000;
constexpr std::uint64_t kCloneIntoCgroup = 0x200000000ull;

long read_number(const char* path, long fallback) {
  std::ifstream in(path);
  long value = fallback;
  if (!(in >> value)) return fallback;
  return value;
}

}  // namespace

pid_t clone_sandbox(std::uint64_t flags, int cgroup_fd, int* pidfd) noexcept {
  CloneArgs args{};
  args.flags = flags | kClonePidfd;
  args.pidfd = reinterpret_cast<std::uint64_t>(pidfd);
  args.exit_signal = SIGCHLD;
  if (cgroup_fd >= 0) {
    args.flags |= kCloneIntoCgroup;
    args.cgroup = static_cast<std::uint64_t>(cgroup_fd);
  }
  long pid = ::syscall(SYS_clone3, &args, sizeof args);
  return pid < 0 ? -errno : static_cast<pid_t>(pid);
}

std::string userns_restriction() {
  if (read_number("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", 0) == 1 &&
      ::geteuid() != 0)
    return "unprivileged user namespaces disabled by kernel.apparmor_restrict_unprivileged_userns";
  if (read_number("/proc/sys/kernel/unprivileged_userns_clone", 1) == 0 && ::geteuid() != 0)
    return "unprivileged user namespaces disabled by kernel.unprivileged_userns_clone = 0";
  if (read_number("/proc/sys/user/max_user_namespaces", 1) == 0)
    return "user namespaces disabled by user.max_user_namespaces = 0";
  return {};
}

bool network_namespaces_allowed(std::string& evidence) {
  long max = read_number("/proc/sys/user/max_net_namespaces", -1);
  if (max == 0) {
    evidence = "network namespaces disabled by user.max_net_namespaces = 0";
    return false;
  }
  if (::access("/proc/self/ns/net", F_OK) != 0) {
    evidence = "no network namespaces in this kernel (no /proc/self/ns/net)";
    return false;
  }
  evidence =
      "a network namespace with only loopback, created for each run (a run refuses "
      "with CRD1003 if it cannot be made)";
  return true;
}

int kernel_version() {
  utsname u{};
  if (::uname(&u) != 0) return 0;
  int major = 0, minor = 0;
  if (std::sscanf(u.release, "%d.%d", &major, &minor) != 2) return 0;
  return major * 1000 + minor;
}

}  // namespace cordon::landlock
