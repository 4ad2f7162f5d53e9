// cordon's own seccomp profile for a container, in the daemon's JSON form (SecurityOpt
// "seccomp=<json>"): everything libseccomp knows for the daemon's architecture is allowed except
// cordon's denials (cordon/seccomp_denials.hpp), which the profile expresses as allow rules with
// argument checks, since the runtime ignores a conditional denial of a call it also allows
// unconditionally. Anything else (a call this libseccomp does not know) fails with EPERM.
#pragma once

#include <boost/json/object.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace cordon::docker {

/// A profile and its counts, for the enforcement report.
struct SeccompProfile {
  std::string arch;             ///< the libseccomp architecture, "SCMP_ARCH_X86_64"
  boost::json::object profile;  ///< the JSON the daemon takes
  std::size_t allowed = 0;      ///< calls allowed whatever their arguments
  std::size_t checked = 0;      ///< calls allowed only with some arguments (clone, ioctl, …)
  std::size_t denied = 0;       ///< calls of cordon's list that this architecture has
  /// "seccomp=<json>", the SecurityOpt entry.
  std::string security_opt() const;
  /// "cordon's, 301 calls allowed, 4 with argument checks, 54 denied".
  std::string summary() const;
};

/// The libseccomp architecture for the daemon's own name (uname's "x86_64" / "aarch64" or Go's
/// "amd64" / "arm64"). Throws Error CRD1003 for any other, naming it. Pure.
std::string seccomp_arch(const std::string& daemon_arch);

/// (mask, value) pairs over the low 32 bits whose union is every 32-bit value except those in
/// `excluded`, and no pair matches an excluded value: `(x & mask) == value` for some pair iff
/// the low 32 bits of x are not excluded. Pure.
std::vector<std::pair<std::uint32_t, std::uint32_t>> complement_masks(
    const std::vector<std::uint32_t>& excluded);

/// cordon's profile for `daemon_arch` (see seccomp_arch), made once per architecture and
/// process. Throws Error CRD1003 for an architecture it cannot make one for.
std::shared_ptr<const SeccompProfile> seccomp_profile(const std::string& daemon_arch);

}  // namespace cordon::docker
