// What a remote host can prove, found by doing: canary commands run through the same script a
// run uses (remote_line), and each capability is claimed only when the canary saw it hold.
#pragma once

#include <cordon/sdk/backend.hpp>

#include "connection.hpp"
#include "remote_line.hpp"

namespace cordon::ssh {

/// A host's proofs, and the wrappers its runs use.
struct HostProof {
  ProbeResult result;
  Wrappers wrappers;
};

/// An argument with every character a naive join would break on: it must come back byte for
/// byte (the login shell's parse of the quoting is part of what is proven).
extern const std::string kRoundTrip;

/// Probes the host behind `connection`. Throws cordon::Error CRD1005 when it goes away.
HostProof probe_host(Connection& connection);

}  // namespace cordon::ssh
