// What the program names of a policy are on this host: the files that the places they are
// looked for resolve to, symlinks followed. Seatbelt matches process-exec by the path the kernel
// resolves, so a blocked program reached through a symlink (`sh -> dash`,
// `/usr/local/bin/curl -> ../Cellar/curl/bin/curl`) is denied only if its target is denied too,
// and an allowed one runs only if its target is allowed too. The one part of a profile's input
// that looks at the host: the generator (profile.hpp) stays pure.
#pragma once

#include <string>
#include <vector>

#include "profile.hpp"

namespace cordon::seatbelt {

/// A place a program name is looked for that resolves to another file on this host.
struct ProgramLink {
  std::string candidate;  ///< where the name is looked for: "/usr/local/bin/curl"
  std::string target;     ///< the file it resolves to: "/usr/local/Cellar/curl/8.7.1/bin/curl"
  bool blocked = true;    ///< a blocked name's (denied too), else an allowed name's (allowed too)
};

/// The links of `input`'s blocked names, and of its allowed names when it has an allow-list:
/// each candidate (program_candidates()) resolved fully on this host, kept when it resolves to
/// a regular file at another path than the candidate's (both as Seatbelt sees them,
/// macos_path()). Candidates that do not exist or are not absolute are skipped.
std::vector<ProgramLink> find_program_links(const ProfileInput& input);

/// Puts the targets of `links` into `input`: resolved_programs for blocked names,
/// resolved_allowed for allowed ones.
void add_program_links(ProfileInput& input, const std::vector<ProgramLink>& links);

/// The links as lines for an operator to review: "CANDIDATE -> TARGET (blocked: denied too)".
std::vector<std::string> describe_program_links(const std::vector<ProgramLink>& links);

}  // namespace cordon::seatbelt
