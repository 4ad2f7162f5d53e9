// The landlock filter variants as SDK deny-lists, and the libseccomp facts cordon-bpfgen
// writes beside them.
#include "compile.hpp"

#include <cordon/sdk/error.hpp>
#include <cordon/sdk/seccomp.hpp>

#include <seccomp.h>

#include <cerrno>
#include <cstdio>

namespace cordon::landlock::bpfgen {

std::vector<sock_filter> compile_filter(const FilterOptions& options) {
  return sdk::compile_denials({.always_denied = true,
                               .no_subprocess = options.no_subprocess,
                               .inet_stream_only = options.inet_stream_only});
}

std::string libseccomp_version() {
  const scmp_version* v = seccomp_version();
  if (!v) throw Error(code::kIsolationFailed, "seccomp: version: unknown");
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->micro);
}

std::uint32_t native_arch() { return seccomp_arch_native(); }

std::string arch_name(std::uint32_t arch) {
  struct Known {
    std::uint32_t token;
    const char* name;
  };
  static constexpr Known kKnown[] = {
      {SCMP_ARCH_X86_64, "x86_64"},    {SCMP_ARCH_X86, "i386"},
      {SCMP_ARCH_X32, "x32"},          {SCMP_ARCH_AARCH64, "aarch64"},
      {SCMP_ARCH_ARM, "arm"},          {SCMP_ARCH_PPC64LE, "ppc64le"},
      {SCMP_ARCH_PPC64, "ppc64"},      {SCMP_ARCH_S390X, "s390x"},
      {SCMP_ARCH_RISCV64, "riscv64"},  {SCMP_ARCH_MIPS64, "mips64"},
      {SCMP_ARCH_MIPSEL64, "mipsel64"}};
  for (const auto& k : kKnown)
    if (k.token == arch) return k.name;
  char hex[16];
  std::snprintf(hex, sizeof hex, "0x%08x", arch);
  return hex;
}

}  // namespace cordon::landlock::bpfgen
