// The seccomp filter of a sandboxed command: compiled by libseccomp at build time
// (bpfgen/), loaded by the child as plain BPF (no allocation after the clone).
#pragma once

#include <linux/filter.h>

#include <span>
#include <string>
#include <vector>

namespace cordon::landlock {

/// Variants of the filter.
struct FilterOptions {
  bool no_subprocess = false;     ///< process.allow_subprocess = false: no fork/vfork/clone
  bool inet_stream_only = false;  ///< TCP ports mode: inet sockets only SOCK_STREAM + TCP
  bool operator==(const FilterOptions&) const = default;
};

/// A compiled filter; the instructions are static data.
struct SeccompProgram {
  std::span<const sock_filter> code;
  bool no_subprocess = false;  ///< it refuses new processes (FilterOptions::no_subprocess)
};

/// The filter variant `options`, compiled at build time for the native architecture; any other
/// architecture (i386, x32) is killed.
SeccompProgram build_filter(const FilterOptions& options) noexcept;

/// Child side: loads `program` on the calling thread (no_new_privs must be set, or the thread
/// must hold CAP_SYS_ADMIN in its user namespace). 0 or -errno.
int load_filter(const SeccompProgram& program) noexcept;

/// The system calls the filter denies with EPERM, for the README and the report.
const std::vector<std::string>& denied_syscalls();

}  // namespace cordon::landlock
