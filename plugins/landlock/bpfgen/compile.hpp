// The landlock backend's seccomp filter variants compiled now, by the SDK's compiler
// (cordon/sdk/seccomp.hpp, where the rules are), and what the build tool records about the
// libseccomp that compiled them. Only the build tool (cordon-bpfgen) and the tests use this: the
// plugin loads the programs the tool wrote.
#pragma once

#include <linux/filter.h>

#include <cstdint>
#include <string>
#include <vector>

#include "../seccomp.hpp"

namespace cordon::landlock::bpfgen {

/// Compiles the filter variant `options` for the native architecture (any other architecture,
/// i386 or x32, is killed): cordon's whole deny-list and the variant's parts. Throws
/// cordon::Error when libseccomp fails.
std::vector<sock_filter> compile_filter(const FilterOptions& options);

/// The version of the libseccomp in use, "major.minor.micro".
std::string libseccomp_version();

/// The native architecture's AUDIT_ARCH_* token, which the programs check first.
std::uint32_t native_arch();

/// The name of an AUDIT_ARCH_* token ("x86_64", "aarch64", ...), or its number in hex.
std::string arch_name(std::uint32_t arch);

}  // namespace cordon::landlock::bpfgen
