// Test knobs that make the backend behave as on a host with fewer features: a lower Landlock
// ABI, no cgroups. They can only take away, never add: what they take is no longer proven, so a
// policy that needs it is refused (CRD1001, naming the capability). The probe's facts and the
// probe cache's fingerprint name them, so a reduced backend says so and never reuses, or leaves,
// a full one's cached proof.
#pragma once

#include <sys/types.h>
#include <cordon/sdk/cgroup.hpp>

#include <string>

namespace cordon::landlock {

/// CORDON_LANDLOCK_MAX_ABI: the highest Landlock ABI the backend may use, as if the kernel's
/// were at most this. -1 when unset or empty (no ceiling); 0 when the value is not a whole
/// number >= 1 (Landlock then counts as absent).
int landlock_abi_ceiling() noexcept;

/// CORDON_CGROUPS: true when set to anything but "" or "auto" (documented: "off"). The probe then
/// finds no cgroup, so the limits fall back to rlimits or are not proven.
bool cgroups_switched_off() noexcept;

/// The SDK's cgroup discovery for `euid`, unless CORDON_CGROUPS switches it off (then no
/// cgroup, with the knob as the evidence). Never throws.
sdk::CgroupSupport probe_cgroups_unless_off(uid_t euid) noexcept;

/// The ABI knob as it was given, e.g. "CORDON_LANDLOCK_MAX_ABI=3", when it is set; else "".
std::string abi_knob();

/// The cgroups knob as it was given, "CORDON_CGROUPS=off", when it switches cgroups off; else "".
std::string cgroups_knob();

/// The knobs in force as they were given, e.g. "CORDON_LANDLOCK_MAX_ABI=3 CORDON_CGROUPS=off";
/// "" when none is.
std::string reductions();

}  // namespace cordon::landlock
