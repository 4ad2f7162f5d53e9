// The test knobs: read from the environment on every call, so that every user of the ABI (the
// probe, the ruleset, the probe cache) sees the same ceiling.
#include "reductions.hpp"

#include <cstdlib>
#include <string_view>

namespace cordon::landlock {

namespace {

constexpr const char* kMaxAbi = "CORDON_LANDLOCK_MAX_ABI";
constexpr const char* kCgroups = "CORDON_CGROUPS";

// The variable's value, or nullptr when it is unset or empty.
const char* knob(const char* name) noexcept {
  const char* value = std::getenv(name);
  return value && *value ? value : nullptr;
}

}  // namespace

int landlock_abi_ceiling() noexcept {
  const char* value = knob(kMaxAbi);
  if (!value) return -1;
  int n = 0;
  for (const char* c = value; *c; ++c) {
    if (*c < '0' || *c > '9' || n > 1000) return 0;
    n = n * 10 + (*c - '0');
  }
  return n;  // 0 for "0": absent, as for any other value that is not an ABI
}

bool cgroups_switched_off() noexcept {
  const char* value = knob(kCgroups);
  return value && std::string_view(value) != "auto";
}

std::string abi_knob() {
  return knob(kMaxAbi) ? std::string(kMaxAbi) + "=" + knob(kMaxAbi) : std::string();
}

sdk::CgroupSupport probe_cgroups_unless_off(uid_t euid) noexcept {
  if (!cgroups_switched_off()) return sdk::probe_cgroups(euid);
  sdk::CgroupSupport off;
  try {
    off.evidence = "cgroups switched off by " + cgroups_knob();
  } catch (...) {
  }
  return off;
}

std::string cgroups_knob() {
  return cgroups_switched_off() ? std::string(kCgroups) + "=" + knob(kCgroups) : std::string();
}

std::string reductions() {
  std::string abi = abi_knob(), cgroups = cgroups_knob();
  return abi.empty() || cgroups.empty() ? abi + cgroups : abi + " " + cgroups;
}

}  // namespace cordon::landlock
