// Installing a compiled deny-list (cordon/sdk/seccomp.hpp) on the calling thread.
#include <cordon/sdk/seccomp.hpp>

#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace cordon::sdk {

int try_install_denials(const std::vector<sock_filter>& code) noexcept {
  if (code.empty() || code.size() > BPF_MAXINSNS) return EINVAL;
  // Without no_new_privs an unprivileged thread may not load a filter, and a setuid program it
  // executed could run under a filter its author never expected.
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  sock_fprog prog{static_cast<unsigned short>(code.size()), const_cast<sock_filter*>(code.data())};
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) return errno;
  return 0;
}

void install_denials(const std::vector<sock_filter>& code) {
  if (int err = try_install_denials(code); err != 0)
    throw Error(code::kIsolationFailed,
                std::string("seccomp: cannot install the filter: ") + std::strerror(err));
}

}  // namespace cordon::sdk
