// A cordon policy as a Seatbelt (SBPL) profile for macOS's sandbox-exec. Pure: no file is
// looked at, so the same policy gives the same profile on any machine (the golden files of the
// tests are generated on Linux).
//
// Every path reaches the profile as a parameter (`(param "READ_0")`, given to sandbox-exec as
// `-D READ_0=/usr`), never as text of the profile, so no path — quotes, parentheses, newlines,
// bytes that are not UTF-8 — can add a rule. Rules follow Seatbelt's order, the last matching
// rule winning: the default deny, what any process needs, the grants, then the denials that
// carve blocked paths and programs out of them.
#pragma once

#include <cordon/sdk/policy.hpp>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace cordon::seatbelt {

/// What a profile is made from besides the policy.
struct ProfileInput {
  Policy policy;  ///< resolved (paths absolute)
  std::filesystem::path workspace;
  std::filesystem::path home;  ///< the command's HOME (a private one, or the caller's)
  std::filesystem::path tmp;   ///< the command's TMPDIR, a private directory of the run
  /// Where blocked and allowed program names are looked for: the granted PATH's directories.
  std::vector<std::string> path_dirs;
  /// cordon's own state (Plan::protected_paths): neither readable nor writable.
  std::vector<std::string> protected_paths;
  /// What the places a blocked program name is looked for resolve to on the host (symlinks
  /// followed), found by the backend (host_programs.hpp): denied too, since Seatbelt matches an
  /// exec by the path the kernel resolves.
  std::vector<std::string> resolved_programs;
  /// The same for the allowed names (allowed_commands): allowed too, or an allowed program
  /// reached through a symlink could not run.
  std::vector<std::string> resolved_allowed;
};

/// A profile and the parameters it names, in the order they are to be passed.
struct Profile {
  std::string text;
  std::vector<std::pair<std::string, std::string>> params;
};

/// The directories a program name is also looked for in, besides PATH: where macOS and its
/// package managers put programs.
const std::vector<std::string>& standard_program_dirs();

/// The program names whose files are neither run nor read: the blocked commands and, when there
/// are any, the multi-call programs (`busybox`, `toybox`), which could run a blocked program's
/// code under their own name (`busybox su`); which names one provides is not read (macOS's
/// programs are not ELF files).
std::vector<std::string> denied_program_names(const Policy& policy);

/// Every place a program of `names` is looked for, as written (not yet as Seatbelt sees it):
/// the name itself when it has a slash, else the name in each of `input.path_dirs`, then in
/// each of standard_program_dirs(). Each once, in order.
std::vector<std::string> program_candidates(const ProfileInput& input,
                                            const std::vector<std::string>& names);

/// `path` as Seatbelt sees it: macOS's symlinked top directories resolved (`/tmp`, `/var` and
/// `/etc` are `/private/...`), lexically normal.
std::string macos_path(const std::string& path);

/// The profile for `input`. Throws cordon::Error CRD2005 for what SBPL cannot say (a port of 0).
Profile generate_profile(const ProfileInput& input);

}  // namespace cordon::seatbelt
