// The seccomp deny-list (protocols.md §5.6), built with libseccomp.
#include "seccomp.hpp"

#include <cordon/error.hpp>
#include <cordon/seccomp_denials.hpp>

#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "fd.hpp"

namespace cordon::landlock {

namespace {

constexpr std::uint64_t kNamespaceFlags = seccomp::kCloneNamespaceFlags;
static_assert(kNamespaceFlags == (CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER |
                                  CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWCGROUP));
constexpr std::uint64_t kLow32 = 0xffffffffull;

[[noreturn]] void fail(const std::string& what, int rc) {
  throw Error(code::kIsolationFailed, "seccomp: " + what + ": " + std::strerror(rc < 0 ? -rc : rc));
}

using Ctx = std::unique_ptr<void, decltype(&seccomp_release)>;

// Adds `action` for `name` with the given argument checks; names this libseccomp does not know
// are skipped (the kernel cannot have them either when libseccomp is older than it).
void rule(const Ctx& ctx, std::uint32_t action, const char* name,
          std::initializer_list<scmp_arg_cmp> args = {}) {
  int nr = seccomp_syscall_resolve_name(name);
  if (nr == __NR_SCMP_ERROR) return;
  int rc = seccomp_rule_add_array(ctx.get(), action, nr, static_cast<unsigned>(args.size()),
                                  args.size() ? args.begin() : nullptr);
  if (rc < 0) fail(std::string("rule for '") + name + "'", rc);
}

void deny_list(const Ctx& ctx) {
  for (const auto& name : denied_syscalls()) rule(ctx, SCMP_ACT_ERRNO(EPERM), name.c_str());
  // clone3's flags live in memory seccomp cannot read: ENOSYS makes libc fall back to clone.
  rule(ctx, SCMP_ACT_ERRNO(ENOSYS), std::string(seccomp::kClone3).c_str());
  for (std::uint64_t bit = 1; bit != 0; bit <<= 1)
    if (kNamespaceFlags & bit)
      rule(ctx, SCMP_ACT_ERRNO(EPERM), "clone", {SCMP_A0_64(SCMP_CMP_MASKED_EQ, bit, bit)});
  // The ioctl request is 32 bits wide to the kernel; compare only those.
  static_assert(seccomp::kDeniedIoctls[0] == TIOCSTI && seccomp::kDeniedIoctls[1] == TIOCLINUX);
  for (std::uint64_t request : seccomp::kDeniedIoctls)
    rule(ctx, SCMP_ACT_ERRNO(EPERM), "ioctl", {SCMP_A1_64(SCMP_CMP_MASKED_EQ, kLow32, request)});
  // personality: no ADDR_NO_RANDOMIZE or READ_IMPLIES_EXEC. Bit 31 is never a valid flag, so
  // requiring it clear lets the 0xffffffff query through.
  for (std::uint64_t bit = 1; bit != 0; bit <<= 1)
    if (seccomp::kDeniedPersonalityFlags & bit)
      rule(ctx, SCMP_ACT_ERRNO(EPERM), "personality",
           {SCMP_A0_64(SCMP_CMP_MASKED_EQ, bit | seccomp::kPersonalityQuery, bit)});
}

// Only unix, inet, inet6 and netlink sockets; AF_VSOCK and friends reach past namespaces.
void socket_families(const Ctx& ctx) {
  for (std::uint64_t family = 0; family <= seccomp::kHighestSocketFamily; ++family) {
    bool ok = false;
    for (std::uint64_t a : seccomp::kAllowedSocketFamilies) ok = ok || a == family;
    if (!ok) rule(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), "socket", {SCMP_A0_64(SCMP_CMP_EQ, family)});
  }
  rule(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), "socket",
       {SCMP_A0_64(SCMP_CMP_GT, seccomp::kHighestSocketFamily)});
}

// TCP ports mode: Landlock governs TCP only, so UDP, raw, SCTP and MPTCP sockets are refused.
void inet_stream_only(const Ctx& ctx) {
  for (int family : {AF_INET, AF_INET6}) {
    for (int type : {SOCK_DGRAM, SOCK_RAW, SOCK_RDM, SOCK_SEQPACKET, SOCK_DCCP, SOCK_PACKET})
      rule(ctx, SCMP_ACT_ERRNO(EPERM), "socket",
           {SCMP_A0_64(SCMP_CMP_EQ, static_cast<std::uint64_t>(family)),
            SCMP_A1_64(SCMP_CMP_MASKED_EQ, 0xf, static_cast<std::uint64_t>(type))});
    rule(ctx, SCMP_ACT_ERRNO(EPERM), "socket",
         {SCMP_A0_64(SCMP_CMP_EQ, static_cast<std::uint64_t>(family)),
          SCMP_A2_64(SCMP_CMP_GT, IPPROTO_TCP)});
  }
}

void no_subprocess(const Ctx& ctx) {
  rule(ctx, SCMP_ACT_ERRNO(EPERM), "fork");
  rule(ctx, SCMP_ACT_ERRNO(EPERM), "vfork");
  rule(ctx, SCMP_ACT_ERRNO(EPERM), "clone", {SCMP_A0_64(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0)});
}

std::vector<sock_filter> export_bpf(const Ctx& ctx) {
  UniqueFd mem(::memfd_create("cordon-seccomp", MFD_CLOEXEC));
  if (!mem) fail("memfd_create", errno);
  if (int rc = seccomp_export_bpf(ctx.get(), mem.get()); rc < 0) fail("export", rc);
  off_t size = ::lseek(mem.get(), 0, SEEK_END);
  if (size <= 0 || size % static_cast<off_t>(sizeof(sock_filter)) != 0) fail("export size", EIO);
  std::vector<sock_filter> code(static_cast<std::size_t>(size) / sizeof(sock_filter));
  if (::pread(mem.get(), code.data(), static_cast<std::size_t>(size), 0) != size)
    fail("read back", EIO);
  return code;
}

}  // namespace

const std::vector<std::string>& denied_syscalls() {
  static const std::vector<std::string> names(seccomp::kDeniedCalls.begin(),
                                              seccomp::kDeniedCalls.end());
  return names;
}

SeccompProgram build_filter(const FilterOptions& options) {
  Ctx ctx(seccomp_init(SCMP_ACT_ALLOW), &seccomp_release);
  if (!ctx) fail("init", ENOMEM);
  if (int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS); rc < 0)
    fail("bad-architecture action", rc);
  if (int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_NNP, 0); rc < 0) fail("nnp", rc);
  deny_list(ctx);
  socket_families(ctx);
  if (options.inet_stream_only) inet_stream_only(ctx);
  if (options.no_subprocess) no_subprocess(ctx);
  return SeccompProgram{export_bpf(ctx)};
}

int load_filter(const SeccompProgram& program) noexcept {
  sock_fprog prog{static_cast<unsigned short>(program.code.size()),
                  const_cast<sock_filter*>(program.code.data())};
  return ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0 ? 0 : -errno;
}

}  // namespace cordon::landlock
