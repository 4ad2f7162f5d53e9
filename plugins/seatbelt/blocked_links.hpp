// The other names (hard links) of a policy's blocked files and programs on this host. Seatbelt
// matches paths, so a blocked file is denied only under the names its profile lists: every other
// name is found and blocked too, or the run is refused, by the same search as the other local
// backends' (other_names_to_mask()). Looks at the host: the generator (profile.hpp) stays pure.
#pragma once

#include <string>
#include <vector>

#include "profile.hpp"

namespace cordon::seatbelt {

/// Adds to `input.policy.filesystem.blocked` the other names of its blocked files (absolute
/// paths) found on this host: in a file's own directory, and directly in each of `writable`.
/// Returns notes for the operator (a blocked directory with more entries than were checked).
/// Throws cordon::Error CRD1007 when a name lies in a writable directory, or when a file's link
/// count says it has names that were not found: the run is refused, never half-blocked.
std::vector<std::string> add_blocked_links(ProfileInput& input,
                                           const std::vector<std::string>& writable);

/// Adds to `input.resolved_programs` the other names (hard links) of the blocked programs'
/// files that exist on this host (each place a blocked name is looked for, and the files those
/// resolve to), found as add_blocked_links() finds them: a hard link is the same program under
/// another name. Throws cordon::Error CRD1007 as add_blocked_links() does.
void add_program_other_names(ProfileInput& input, const std::vector<std::string>& writable);

}  // namespace cordon::seatbelt
