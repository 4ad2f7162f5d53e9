// The supervisor's guard: a hand-written seccomp BPF program (see spawn_guard.hpp).
#include "spawn_guard.hpp"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <initializer_list>

namespace cordon::detail {

namespace {

#if defined(__x86_64__)
constexpr unsigned kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr unsigned kArch = AUDIT_ARCH_AARCH64;
#else
constexpr unsigned kArch = 0;
#endif

constexpr unsigned kAllow = SECCOMP_RET_ALLOW;
constexpr unsigned kDeny = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
constexpr unsigned kNoSys = SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA);
constexpr unsigned kX32Bit = 0x40000000;

// The low 32 bits of argument `i` (pids and commands are ints; the kernel truncates too).
constexpr unsigned arg_lo(int i) {
  return static_cast<unsigned>(offsetof(seccomp_data, args) + 8 * i +
                               (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? 4 : 0));
}

// Appends instructions; too long a program is reported by build_guard.
class Writer {
 public:
  explicit Writer(GuardFilter& f) : f_(f) { f_.size = 0; }
  void stmt(unsigned short code, unsigned k) { put(BPF_STMT(code, k)); }
  void jump(unsigned short code, unsigned k, unsigned char jt, unsigned char jf) {
    put(BPF_JUMP(code, k, jt, jf));
  }
  void ret(unsigned k) { stmt(BPF_RET | BPF_K, k); }
  void load(unsigned offset) { stmt(BPF_LD | BPF_W | BPF_ABS, offset); }
  // if A == value: return kDeny
  void deny_if(unsigned value) {
    jump(BPF_JMP | BPF_JEQ | BPF_K, value, 0, 1);
    ret(kDeny);
  }
  bool ok() const { return ok_; }

 private:
  void put(sock_filter insn) {
    if (f_.size >= sizeof f_.code / sizeof f_.code[0]) {
      ok_ = false;
      return;
    }
    f_.code[f_.size++] = insn;
  }
  GuardFilter& f_;
  bool ok_ = true;
};

// One block per guarded system call: "if nr == call: load arg; deny on values; allow".
void guard_call(Writer& w, long nr, int arg, std::initializer_list<unsigned> values) {
  auto len = static_cast<unsigned char>(1 + 2 * values.size() + 1);
  w.jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<unsigned>(nr), 0, len);
  w.load(arg_lo(arg));
  for (unsigned v : values) w.deny_if(v);
  w.ret(kAllow);
}

}  // namespace

bool guard_supported() { return kArch != 0; }

bool build_guard(GuardFilter& f, pid_t supervisor, pid_t group) {
  if (!guard_supported()) return false;
  const auto sup = static_cast<unsigned>(supervisor);
  const auto neg_group = static_cast<unsigned>(-group);
  Writer w(f);
  w.load(offsetof(seccomp_data, arch));
  w.jump(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0);
  w.ret(kNoSys);  // another ABI could reach the same calls by other numbers
  w.load(offsetof(seccomp_data, nr));
  w.jump(BPF_JMP | BPF_JGE | BPF_K, kX32Bit, 0, 1);
  w.ret(kNoSys);
  guard_call(w, SYS_kill, 0, {sup, 0xffffffffu, neg_group});
  guard_call(w, SYS_tkill, 0, {sup});
  guard_call(w, SYS_tgkill, 0, {sup});
  guard_call(w, SYS_rt_sigqueueinfo, 0, {sup});
  guard_call(w, SYS_rt_tgsigqueueinfo, 0, {sup});
  guard_call(w, SYS_prlimit64, 0, {sup});
  guard_call(w, SYS_pidfd_open, 0, {sup});
  guard_call(w, SYS_setpgid, 1, {static_cast<unsigned>(group)});
  w.jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_pidfd_send_signal, 0, 1);
  w.ret(kDeny);  // a /proc/<pid> directory is a pidfd too: no target can be checked
  // fcntl: F_SETOWN_EX (its target is behind a pointer) never; F_SETOWN not to the supervisor.
  w.jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_fcntl, 0, 10);
  w.load(arg_lo(1));
  w.deny_if(F_SETOWN_EX);
  w.jump(BPF_JMP | BPF_JEQ | BPF_K, F_SETOWN, 0, 5);
  w.load(arg_lo(2));
  w.deny_if(sup);
  w.deny_if(neg_group);
  w.ret(kAllow);
  w.ret(kAllow);
  return w.ok();
}

int install_guard(const GuardFilter& f) {
  sock_fprog prog{f.size, const_cast<sock_filter*>(f.code)};
  if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0) return errno;
  return 0;
}

}  // namespace cordon::detail
