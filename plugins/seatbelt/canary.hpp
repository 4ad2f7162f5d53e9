// The probe on macOS: a canary run through the launcher under the profile of a small policy.
// In a private directory it writes inside its write grant (which must work), writes outside it
// (which must fail) and reads a blocked file (which must fail, its content never shown). Only
// when all three hold does the launcher enforce the profile at all; the probe then proves what
// the canary checked, and what needs nothing of Seatbelt (the rlimits and the deadline of the
// SDK's supervised child). The blocked file has a second name (a hard link) beside it, and a
// third is made in the write grant: fs.read.block is proven only if neither can be read
// either. A blocked program that prints the token must not run, nor a copy of it made in the
// grant: fs.exec.block. The host's loopback must be out of reach with the network denied
// (net.deny), HOME an empty 0700 directory of the run (home.private), and with reads confined
// a file outside the grants unreadable (fs.read.confine). Every other capability stays
// unproven, with the reason why.
#pragma once

#include <cordon/sdk/backend.hpp>

#include <string>

namespace cordon::seatbelt {

/// The probe of a host whose launcher is `launcher` (sandbox-exec by absolute path, or a
/// stand-in in the tests), through run_sandboxed(). Available only when every canary check
/// held; otherwise unavailable, with a reason that names each check that failed ("a write
/// outside the grant worked ('…' was written)"), and every proof false. Never throws.
ProbeResult canary_probe(const std::string& launcher);

}  // namespace cordon::seatbelt
