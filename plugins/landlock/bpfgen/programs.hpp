// The seccomp programs compiled at build time by cordon-bpfgen (see main.cpp), which writes
// their definitions to seccomp_programs.cpp in the build tree.
#pragma once

#include <linux/filter.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace cordon::landlock::bpfgen {

/// The position of a filter variant in kPrograms.
constexpr std::size_t program_index(bool no_subprocess, bool inet_stream_only) {
  return (no_subprocess ? 1 : 0) + (inet_stream_only ? 2 : 0);
}

/// The four variants of the filter, indexed by program_index.
extern const std::array<std::span<const sock_filter>, 4> kPrograms;

/// The libseccomp version that compiled them, "major.minor.micro".
extern const char kLibseccompVersion[];

/// The AUDIT_ARCH_* token of the architecture they were compiled for, and its name.
extern const std::uint32_t kNativeArch;
extern const char kNativeArchName[];

}  // namespace cordon::landlock::bpfgen
