// What the canary's findings prove (canary.hpp): once its launcher enforced the profile at all,
// each capability with its evidence, the ones it checked decided by what it found, the others
// by what Seatbelt and the SDK's supervised child can keep.
#pragma once

#include <cordon/sdk/backend.hpp>

#include <string>

namespace cordon::seatbelt {

/// What the canary's checks that decide one proof each found: "" when each held.
struct CanaryFindings {
  std::string names_read;  ///< fs.read.block: a blocked file's other names
  std::string programs;    ///< fs.exec.block: a blocked program, or a copy of it
  std::string network;     ///< net.deny: the host's loopback reached
  std::string home;        ///< home.private: HOME not a fresh directory of the run
  std::string reads;       ///< fs.read.confine: a file outside the grants read
};

/// Fills `r.proofs` for `launcher`, whose canary held: every capability, proven or not, with its
/// evidence.
void prove_canary(ProbeResult& r, const std::string& launcher, const CanaryFindings& found);

}  // namespace cordon::seatbelt
