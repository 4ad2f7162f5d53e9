// The other names of blocked files (blocked_links.hpp).
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
    if (!others.walked_all)
      notes.push_back("blocked directory '" + path +
                      "' holds too many entries to check each file for other names (hard "
                      "links): those beyond the first " +
                      std::to_string(kOtherNamesWalk) + " were not");
  }
  return notes;
}

}  // namespace cordon::seatbelt
