// cordon's seccomp profile in the daemon's JSON form. Pure: libseccomp is used only for its
// tables of system call names.
#include "seccomp_profile.hpp"

#include <cordon/sdk/error.hpp>
#include <cordon/sdk/seccomp_denials.hpp>

#include <boost/json/array.hpp>
#include <boost/json/serialize.hpp>

#include <seccomp.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>

namespace cordon::docker {

namespace json = boost::json;

namespace {

// Past the highest number of x86_64 and aarch64 (both below 500 today), with room to grow.
constexpr int kHighestSyscall = 2047;
constexpr std::uint64_t kLow32 = 0xffffffffull;

// The calls allowed only with argument checks: never in the unconditional list.
const std::set<std::string, std::less<>> kChecked = {"clone", "ioctl", "personality", "socket"};

// Every system call name libseccomp knows for `arch`, by number.
std::vector<std::string> known_calls(std::uint32_t arch) {
  std::vector<std::string> names;
  for (int nr = 0; nr <= kHighestSyscall; ++nr)
    if (char* name = seccomp_syscall_resolve_num_arch(arch, nr)) {
      names.emplace_back(name);
      std::free(name);
    }
  return names;
}

json::object arg(unsigned index, std::uint64_t value, const char* op, std::uint64_t two = 0) {
  json::object a{{"index", index}, {"value", value}, {"op", op}};
  // For SCMP_CMP_MASKED_EQ, value is the mask and valueTwo what the masked argument must be.
  if (std::string_view(op) == "SCMP_CMP_MASKED_EQ") a["valueTwo"] = two;
  return a;
}

json::object rule(json::array names, const char* action, json::array args = {}, int err = 0) {
  json::object r{{"names", std::move(names)}, {"action", action}};
  if (!args.empty()) r["args"] = std::move(args);
  if (err) r["errnoRet"] = err;
  return r;
}

// One allow rule per alternative: the runtime ANDs the comparisons of one rule, and turns two
// comparisons of the same argument into two rules, so a rule holds one comparison per argument.
void checked_rules(json::array& rules) {
  rules.push_back(rule({"clone"}, "SCMP_ACT_ALLOW",
                       {arg(0, seccomp::kCloneNamespaceFlags, "SCMP_CMP_MASKED_EQ", 0)}));
  std::vector<std::uint32_t> ioctls(seccomp::kDeniedIoctls.begin(), seccomp::kDeniedIoctls.end());
  for (auto [mask, value] : complement_masks(ioctls))
    rules.push_back(rule({"ioctl"}, "SCMP_ACT_ALLOW", {arg(1, mask, "SCMP_CMP_MASKED_EQ", value)}));
  rules.push_back(
      rule({"personality"}, "SCMP_ACT_ALLOW",
           {arg(0, seccomp::kPersonalityQuery, "SCMP_CMP_MASKED_EQ", seccomp::kPersonalityQuery)}));
  rules.push_back(rule({"personality"}, "SCMP_ACT_ALLOW",
                       {arg(0, seccomp::kDeniedPersonalityFlags, "SCMP_CMP_MASKED_EQ", 0)}));
  for (auto family : seccomp::kAllowedSocketFamilies)
    rules.push_back(rule({"socket"}, "SCMP_ACT_ALLOW", {arg(0, family, "SCMP_CMP_EQ")}));
  // Other families: EAFNOSUPPORT, as the kernel says for one it lacks (EPERM would look like a
  // missing capability).
  const auto& ok = seccomp::kAllowedSocketFamilies;
  for (std::uint64_t family = 0; family <= seccomp::kHighestSocketFamily; ++family)
    if (std::find(ok.begin(), ok.end(), family) == ok.end())
      rules.push_back(
          rule({"socket"}, "SCMP_ACT_ERRNO", {arg(0, family, "SCMP_CMP_EQ")}, EAFNOSUPPORT));
  rules.push_back(rule({"socket"}, "SCMP_ACT_ERRNO",
                       {arg(0, seccomp::kHighestSocketFamily, "SCMP_CMP_GT")}, EAFNOSUPPORT));
}

SeccompProfile make_profile(const std::string& arch_name, std::uint32_t arch) {
  SeccompProfile p;
  p.arch = arch_name;
  std::vector<std::string> known = known_calls(arch);
  auto knows = [&known](std::string_view n) {
    return std::find(known.begin(), known.end(), n) != known.end();
  };
  const auto& denied = seccomp::kDeniedCalls;
  json::array allow, deny;
  for (const auto& name : known) {
    bool refused =
        name == seccomp::kClone3 || std::find(denied.begin(), denied.end(), name) != denied.end();
    if (!refused && !kChecked.count(name)) allow.emplace_back(name);
  }
  for (auto name : denied)
    if (knows(name)) deny.emplace_back(name);
  p.allowed = allow.size();
  p.denied = deny.size() + (knows(seccomp::kClone3) ? 1 : 0);
  p.checked = static_cast<std::size_t>(std::count_if(
      kChecked.begin(), kChecked.end(), [&](const std::string& n) { return knows(n); }));
  json::array rules;
  rules.push_back(rule(std::move(allow), "SCMP_ACT_ALLOW"));
  checked_rules(rules);
  // Listed although the default action refuses them too, so that the profile reads as cordon's
  // list; clone3 gets ENOSYS so that libc falls back to clone.
  rules.push_back(rule(std::move(deny), "SCMP_ACT_ERRNO", {}, EPERM));
  rules.push_back(rule({json::string(seccomp::kClone3)}, "SCMP_ACT_ERRNO", {}, ENOSYS));
  p.profile = json::object{{"defaultAction", "SCMP_ACT_ERRNO"},
                           {"defaultErrnoRet", EPERM},
                           {"architectures", json::array{json::string(arch_name)}},
                           {"syscalls", std::move(rules)}};
  return p;
}

void cover(std::uint32_t prefix, int depth, const std::vector<std::uint32_t>& excluded,
           std::vector<std::pair<std::uint32_t, std::uint32_t>>& out) {
  std::uint32_t mask = depth == 0 ? 0 : static_cast<std::uint32_t>(kLow32 << (32 - depth));
  bool hit = std::any_of(excluded.begin(), excluded.end(),
                         [&](std::uint32_t v) { return (v & mask) == prefix; });
  if (!hit) {
    out.emplace_back(mask, prefix);
    return;
  }
  if (depth == 32) return;  // an excluded value itself
  cover(prefix, depth + 1, excluded, out);
  cover(prefix | (1u << (31 - depth)), depth + 1, excluded, out);
}

}  // namespace

std::string SeccompProfile::security_opt() const { return "seccomp=" + json::serialize(profile); }

std::string SeccompProfile::summary() const {
  return "cordon's, " + std::to_string(allowed) + " calls allowed, " + std::to_string(checked) +
         " with argument checks (clone, ioctl, personality, socket), " + std::to_string(denied) +
         " denied";
}

std::string seccomp_arch(const std::string& daemon_arch) {
  if (daemon_arch == "x86_64" || daemon_arch == "amd64") return "SCMP_ARCH_X86_64";
  if (daemon_arch == "aarch64" || daemon_arch == "arm64") return "SCMP_ARCH_AARCH64";
  throw Error(code::kIsolationFailed,
              "the docker daemon's architecture '" + daemon_arch +
                  "' is not one cordon makes a seccomp profile for (x86_64, aarch64)",
              "run the daemon on x86_64 or aarch64, or use another backend");
}

std::vector<std::pair<std::uint32_t, std::uint32_t>> complement_masks(
    const std::vector<std::uint32_t>& excluded) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> out;
  cover(0, 0, excluded, out);
  return out;
}

std::shared_ptr<const SeccompProfile> seccomp_profile(const std::string& daemon_arch) {
  std::string name = seccomp_arch(daemon_arch);
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const SeccompProfile>> made;
  std::lock_guard lock(mutex);
  auto& slot = made[name];
  if (!slot) {
    std::uint32_t arch = name == "SCMP_ARCH_X86_64" ? SCMP_ARCH_X86_64 : SCMP_ARCH_AARCH64;
    slot = std::make_shared<const SeccompProfile>(make_profile(name, arch));
  }
  return slot;
}

}  // namespace cordon::docker
