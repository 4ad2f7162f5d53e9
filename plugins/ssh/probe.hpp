// What a remote host can prove, found by doing: canary commands run through the same script a
// run uses (remote_line), and each capability is claimed only when the canary saw it hold.
#pragma once

#include <cordon/sdk/backend.hpp>

#include <optional>
#include <string>

#include "connection.hpp"
#include "remote_line.hpp"

namespace cordon::ssh {

/// A host's proofs, and how its runs go: under the remote cordon at `cordon`, or through the
/// plain-shell script with `wrappers`.
struct HostProof {
  ProbeResult result;
  Wrappers wrappers;
  std::optional<std::string> cordon;
  bool serve = false;  ///< that cordon has `serve --framed`: runs go over one open channel
};

/// An argument with every character a naive join would break on: it must come back byte for
/// byte (the login shell's parse of the quoting is part of what is proven).
extern const std::string kRoundTrip;

/// Probes the host behind `connection`: the remote cordon when the settings name one or the
/// login has one in PATH (its landlock backend's proofs, once a canary ran through it), else
/// the plain-shell path. A remote cordon the settings name that cannot run is no fallback: the
/// host is unavailable. Throws cordon::Error CRD1005 when the host goes away.
HostProof probe_host(Connection& connection);

}  // namespace cordon::ssh
