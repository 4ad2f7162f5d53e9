// The seccomp deny-list (seccomp_denials.hpp): the programs cordon-bpfgen compiled at build time
// with the SDK's compiler (core/src/seccomp_build.cpp holds the rules), loaded as they are.
#include "seccomp.hpp"

#include <cordon/sdk/seccomp_denials.hpp>

#include <linux/seccomp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "bpfgen/programs.hpp"

namespace cordon::landlock {

const std::vector<std::string>& denied_syscalls() {
  static const std::vector<std::string> names(seccomp::kDeniedCalls.begin(),
                                              seccomp::kDeniedCalls.end());
  return names;
}

SeccompProgram build_filter(const FilterOptions& options) noexcept {
  return SeccompProgram{
      bpfgen::kPrograms[bpfgen::program_index(options.no_subprocess, options.inet_stream_only)],
      options.no_subprocess};
}

int load_filter(const SeccompProgram& program) noexcept {
  sock_fprog prog{static_cast<unsigned short>(program.code.size()),
                  const_cast<sock_filter*>(program.code.data())};
  return ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0 ? 0 : -errno;
}

}  // namespace cordon::landlock
