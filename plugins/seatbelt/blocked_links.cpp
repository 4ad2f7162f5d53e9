// The other names of blocked files and programs (blocked_links.hpp).
#include "blocked_links.hpp"

#include <cordon/sdk/path_guard.hpp>

#include <algorithm>

namespace cordon::seatbelt {

std::vector<std::string> add_blocked_links(ProfileInput& input,
                                           const std::vector<std::string>& writable) {
  std::vector<std::string> notes;
  auto& blocked = input.policy.filesystem.blocked;
  const std::vector<std::string> given = blocked;
  for (const auto& path : given) {
    if (path.empty() || path.front() != '/') continue;
    OtherNames others = other_names_to_mask(path, writable);
    for (auto& name : others.names)
      if (std::find(blocked.begin(), blocked.end(), name) == blocked.end())
        blocked.push_back(std::move(name));
    if (!others.walked_all) notes.push_back(unwalked_note(path));
  }
  return notes;
}

void add_program_other_names(ProfileInput& input, const std::vector<std::string>& writable) {
  std::vector<std::string> files = program_candidates(input, denied_program_names(input.policy));
  files.insert(files.end(), input.resolved_programs.begin(), input.resolved_programs.end());
  auto& out = input.resolved_programs;
  for (const auto& file : files) {
    if (file.empty() || file.front() != '/') continue;
    for (auto& name : other_names_to_mask(file, writable).names)
      if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(std::move(name));
  }
}

}  // namespace cordon::seatbelt
