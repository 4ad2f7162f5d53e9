// The small pure pieces of the policy model: presets, shell modes, durations, equality.
#include <cordon/sdk/policy.hpp>

#include "policy_keys.hpp"

#include <algorithm>
#include <charconv>
#include <limits>

namespace cordon {

namespace detail {
const std::map<std::string, std::string>& embedded_presets();

const std::vector<ShellAlias>& shell_aliases() {
  static const std::vector<ShellAlias> aliases = {
      {"off", ShellMode::off},
      {"", ShellMode::off},
      {"0", ShellMode::off},
      {"false", ShellMode::off},
      {"no", ShellMode::off},
      {"none", ShellMode::off},
      {"sandboxed", ShellMode::sandboxed},
      {"1", ShellMode::sandboxed},
      {"true", ShellMode::sandboxed},
      {"yes", ShellMode::sandboxed},
      {"sandbox", ShellMode::sandboxed},
      {"native", ShellMode::sandboxed},
      {"unsafe", ShellMode::unsafe},
      {"raw", ShellMode::unsafe},
      {"host", ShellMode::unsafe},
  };
  return aliases;
}
}  // namespace detail

bool Policy::same_rules(const Policy& other) const {
  // `extends`, `origins`, `sources` and `files` say where the rules came from, not what they are.
  return version == other.version && name == other.name && limits == other.limits &&
         filesystem == other.filesystem && network == other.network && process == other.process &&
         env == other.env && backend == other.backend && backends == other.backends;
}

const std::vector<std::string>& preset_names() {
  static const std::vector<std::string> names = {"minimal", "standard", "generous", "strict",
                                                 "permissive"};
  return names;
}

std::optional<std::string> preset_text(const std::string& name) {
  const auto& presets = detail::embedded_presets();
  auto it = presets.find(name);
  if (it == presets.end()) return std::nullopt;
  return it->second;
}

std::optional<ShellMode> parse_shell_mode(const std::string& text) {
  std::string lower = text;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) {
    return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  });
  for (const auto& alias : detail::shell_aliases())
    if (alias.name == lower) return alias.mode;
  return std::nullopt;
}

const char* to_string(ShellMode mode) {
  switch (mode) {
    case ShellMode::off:
      return "off";
    case ShellMode::sandboxed:
      return "sandboxed";
    case ShellMode::unsafe:
      return "unsafe";
  }
  return "off";
}

const char* to_string(HomeMode mode) { return mode == HomeMode::host ? "host" : "private"; }

namespace {

struct DurationUnit {
  std::string_view suffix;
  std::int64_t millis;
};

// Longest suffix first so that "ms" is not read as "m" followed by junk.
constexpr DurationUnit kUnits[] = {{"ms", 1}, {"h", 3'600'000}, {"m", 60'000}, {"s", 1'000}};

}  // namespace

std::optional<Duration> parse_duration(const std::string& text) {
  std::string_view digits = text;
  std::int64_t scale = 1'000;  // a bare integer counts seconds
  for (const auto& unit : kUnits) {
    if (digits.size() > unit.suffix.size() && digits.ends_with(unit.suffix)) {
      digits.remove_suffix(unit.suffix.size());
      scale = unit.millis;
      break;
    }
  }
  if (digits.empty() ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size() || value <= 0) return std::nullopt;
  if (value > std::numeric_limits<std::int64_t>::max() / scale) return std::nullopt;
  return Duration(value * scale);
}

std::string format_duration(Duration d) {
  const std::int64_t ms = d.count();
  if (ms != 0) {
    for (const auto& unit : {kUnits[1], kUnits[2], kUnits[3]})
      if (ms % unit.millis == 0) return std::to_string(ms / unit.millis) + std::string(unit.suffix);
    return std::to_string(ms) + "ms";
  }
  return "0s";
}

namespace {

// `asked` longer than the policy's `limit` (limits.`key`): the error refusing it.
std::optional<Error> loosening(const Policy& policy, Duration asked, std::optional<Duration> limit,
                               const char* key, const std::string& source, const char* code) {
  if (!limit || asked <= *limit) return std::nullopt;
  const std::string max = format_duration(*limit);
  const std::string name = policy.name.empty() ? "the policy" : "policy '" + policy.name + "'";
  return Error(code,
               source + " '" + format_duration(asked) + "' is longer than limits." + key + " (" +
                   max + ") of " + name + ": a caller may shorten the deadline, never lengthen it",
               "ask for at most " + max + ", or run under a policy whose limits." + key +
                   " is longer (one that extends it with [limits] " + key + " = \"" +
                   format_duration(asked) + "\")");
}

}  // namespace

std::optional<Error> timeout_loosening(const Policy& policy, Duration asked,
                                       const std::string& source, const char* code) {
  return loosening(policy, asked, policy.limits.timeout, "timeout", source, code);
}

std::optional<Error> job_timeout_loosening(const Policy& policy, Duration asked,
                                           const std::string& source, const char* code) {
  return loosening(policy, asked, policy.limits.job_lifetime, "job_lifetime", source, code);
}

}  // namespace cordon
