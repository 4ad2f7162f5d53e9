// The files program names resolve to on this host (host_programs.hpp).
#include "host_programs.hpp"

#include <filesystem>
#include <optional>

namespace cordon::seatbelt {

namespace {

namespace fs = std::filesystem;

// The file `candidate` resolves to when it is another path than the candidate, as Seatbelt sees
// both: on macOS `/tmp/x` resolves to `/private/tmp/x`, which is no link of the profile's.
std::optional<std::string> link_target(const std::string& candidate) {
  if (candidate.empty() || candidate.front() != '/') return std::nullopt;
  std::error_code ec;
  fs::path target = fs::canonical(candidate, ec);
  if (ec || !fs::is_regular_file(target, ec)) return std::nullopt;
  if (macos_path(target.string()) == macos_path(candidate)) return std::nullopt;
  return target.string();
}

void add_links(const ProfileInput& in, const std::vector<std::string>& names, bool blocked,
               std::vector<ProgramLink>& out) {
  for (const auto& candidate : program_candidates(in, names))
    if (auto target = link_target(candidate)) out.push_back({candidate, *target, blocked});
}

}  // namespace

std::vector<ProgramLink> find_program_links(const ProfileInput& input) {
  const auto& p = input.policy.process;
  std::vector<ProgramLink> out;
  add_links(input, denied_program_names(input.policy), true, out);
  // Without an allow-list every program may run: an allowed name's target needs no rule.
  if (!p.allowed_commands.empty()) add_links(input, p.allowed_commands, false, out);
  return out;
}

void add_program_links(ProfileInput& input, const std::vector<ProgramLink>& links) {
  for (const auto& l : links)
    (l.blocked ? input.resolved_programs : input.resolved_allowed).push_back(l.target);
}

std::vector<std::string> describe_program_links(const std::vector<ProgramLink>& links) {
  std::vector<std::string> out;
  for (const auto& l : links)
    out.push_back(l.candidate + " -> " + l.target +
                  (l.blocked ? " (blocked: denied too)" : " (allowed: allowed too)"));
  return out;
}

}  // namespace cordon::seatbelt
