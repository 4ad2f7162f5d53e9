// cordon's seccomp deny-list (seccomp_denials.hpp) compiled by libseccomp: the one place its
// rules are written. The landlock backend's build tool (cordon-bpfgen) calls it too.
#include <cordon/sdk/seccomp.hpp>
#include <cordon/sdk/seccomp_denials.hpp>

#include <netinet/in.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>

#include "unique_fd.hpp"

namespace cordon::sdk {

namespace {

constexpr std::uint64_t kNamespaceFlags = seccomp::kCloneNamespaceFlags;
static_assert(kNamespaceFlags == (CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER |
                                  CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWCGROUP));
constexpr std::uint64_t kLow32 = 0xffffffffull;

[[noreturn]] void fail(const std::string& what, int rc) {
  throw Error(code::kIsolationFailed, "seccomp: " + what + ": " + std::strerror(rc < 0 ? -rc : rc));
}

using Ctx = std::unique_ptr<void, decltype(&seccomp_release)>;

// One argument comparison (libseccomp's SCMP_A*_64 macros leave datum_b implicit, which clang
// reports under -Wmissing-field-initializers).
scmp_arg_cmp arg(unsigned index, scmp_compare op, std::uint64_t a, std::uint64_t b = 0) {
  return scmp_arg_cmp{index, op, a, b};
}

// Adds `action` for `name` with the given argument checks; names this libseccomp does not know
// are skipped (the kernel cannot have them either when libseccomp is older than it).
void rule(const Ctx& ctx, std::uint32_t action, std::string_view name,
          std::initializer_list<scmp_arg_cmp> args = {}) {
  std::string call(name);
  int nr = seccomp_syscall_resolve_name(call.c_str());
  if (nr == __NR_SCMP_ERROR) return;
  int rc = seccomp_rule_add_array(ctx.get(), action, nr, static_cast<unsigned>(args.size()),
                                  args.size() ? args.begin() : nullptr);
  if (rc < 0) fail("rule for '" + call + "'", rc);
}

// clone3's flags live in memory seccomp cannot read: ENOSYS makes libc fall back to clone.
void clone3_enosys(const Ctx& ctx) { rule(ctx, SCMP_ACT_ERRNO(ENOSYS), seccomp::kClone3); }

void deny_list(const Ctx& ctx) {
  for (auto name : seccomp::kDeniedCalls) rule(ctx, SCMP_ACT_ERRNO(EPERM), name);
  clone3_enosys(ctx);
  for (std::uint64_t bit = 1; bit != 0; bit <<= 1)
    if (kNamespaceFlags & bit)
      rule(ctx, SCMP_ACT_ERRNO(EPERM), "clone", {arg(0, SCMP_CMP_MASKED_EQ, bit, bit)});
  // The ioctl request is 32 bits wide to the kernel; compare only those.
  static_assert(seccomp::kDeniedIoctls[0] == TIOCSTI && seccomp::kDeniedIoctls[1] == TIOCLINUX);
  for (std::uint64_t request : seccomp::kDeniedIoctls)
    rule(ctx, SCMP_ACT_ERRNO(EPERM), "ioctl", {arg(1, SCMP_CMP_MASKED_EQ, kLow32, request)});
  // personality: no ADDR_NO_RANDOMIZE or READ_IMPLIES_EXEC. Bit 31 is never a valid flag, so
  // requiring it clear lets the 0xffffffff query through.
  for (std::uint64_t bit = 1; bit != 0; bit <<= 1)
    if (seccomp::kDeniedPersonalityFlags & bit)
      rule(ctx, SCMP_ACT_ERRNO(EPERM), "personality",
           {arg(0, SCMP_CMP_MASKED_EQ, bit | seccomp::kPersonalityQuery, bit)});
}

// Only unix, inet, inet6 and netlink sockets; AF_VSOCK and friends reach past namespaces.
void socket_families(const Ctx& ctx) {
  for (std::uint64_t family = 0; family <= seccomp::kHighestSocketFamily; ++family) {
    bool ok = false;
    for (std::uint64_t a : seccomp::kAllowedSocketFamilies) ok = ok || a == family;
    if (!ok) rule(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), "socket", {arg(0, SCMP_CMP_EQ, family)});
  }
  rule(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), "socket",
       {arg(0, SCMP_CMP_GT, seccomp::kHighestSocketFamily)});
}

// TCP ports mode: Landlock governs TCP only, so UDP, raw, SCTP and MPTCP sockets are refused.
void inet_stream_only(const Ctx& ctx) {
  for (int family : {AF_INET, AF_INET6}) {
    for (int type : {SOCK_DGRAM, SOCK_RAW, SOCK_RDM, SOCK_SEQPACKET, SOCK_DCCP, SOCK_PACKET})
      rule(ctx, SCMP_ACT_ERRNO(EPERM), "socket",
           {arg(0, SCMP_CMP_EQ, static_cast<std::uint64_t>(family)),
            arg(1, SCMP_CMP_MASKED_EQ, 0xf, static_cast<std::uint64_t>(type))});
    rule(ctx, SCMP_ACT_ERRNO(EPERM), "socket",
         {arg(0, SCMP_CMP_EQ, static_cast<std::uint64_t>(family)),
          arg(2, SCMP_CMP_GT, IPPROTO_TCP)});
  }
}

void no_subprocess(const Ctx& ctx) {
  rule(ctx, SCMP_ACT_ERRNO(EPERM), "fork");
  rule(ctx, SCMP_ACT_ERRNO(EPERM), "vfork");
  rule(ctx, SCMP_ACT_ERRNO(EPERM), "clone", {arg(0, SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0)});
}

Ctx new_context() {
  Ctx ctx(seccomp_init(SCMP_ACT_ALLOW), &seccomp_release);
  if (!ctx) fail("init", ENOMEM);
  if (int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS); rc < 0)
    fail("bad-architecture action", rc);
  // install_denials() sets no_new_privs itself; the program is only exported here.
  if (int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_NNP, 0); rc < 0) fail("nnp", rc);
  // A binary tree of syscall numbers instead of a list: the kernel emulates the filter for every
  // syscall number when it is loaded (to cache the always-allowed ones), and that took ~200 us
  // with the list, ~80 us with the tree, on the path to every command's exec.
  if (int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_OPTIMIZE, 2); rc < 0)
    fail("optimize", rc);
  return ctx;
}

// libseccomp 2.5 exports to a descriptor only; a memfd keeps it off the disk.
std::vector<sock_filter> export_bpf(const Ctx& ctx) {
  detail::Fd mem(::memfd_create("cordon-seccomp", MFD_CLOEXEC));
  if (mem.fd < 0) fail("memfd_create", errno);
  if (int rc = seccomp_export_bpf(ctx.get(), mem.fd); rc < 0) fail("export", rc);
  off_t size = ::lseek(mem.fd, 0, SEEK_END);
  if (size <= 0 || size % static_cast<off_t>(sizeof(sock_filter)) != 0) fail("export size", EIO);
  std::vector<sock_filter> code(static_cast<std::size_t>(size) / sizeof(sock_filter));
  if (::pread(mem.fd, code.data(), static_cast<std::size_t>(size), 0) != size)
    fail("read back", EIO);
  return code;
}

}  // namespace

std::vector<sock_filter> compile_denials(const DenialOptions& options) {
  Ctx ctx = new_context();
  if (options.always_denied) {
    deny_list(ctx);
    socket_families(ctx);
  }
  if (options.inet_stream_only) inet_stream_only(ctx);
  if (options.no_subprocess) {
    no_subprocess(ctx);
    if (!options.always_denied) clone3_enosys(ctx);
  }
  return export_bpf(ctx);
}

}  // namespace cordon::sdk
