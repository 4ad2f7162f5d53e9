// Loading a policy: parse (TOML or YAML by extension), apply presets and `extends`, validate.
#pragma once

#include <cordon/sdk/error.hpp>
#include <cordon/sdk/export.hpp>
#include <cordon/sdk/policy.hpp>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace cordon {

/// Most errors one file reports before the rest are summarised as CRD2013.
inline constexpr std::size_t kMaxReportedErrors = 50;
/// Longest `extends` chain.
inline constexpr int kMaxExtendsDepth = 8;
/// Largest policy file read, in bytes; a larger one is refused with CRD2014.
inline constexpr std::size_t kMaxPolicyBytes = 1024 * 1024;

/// Loads a policy file with everything it extends. Throws ErrorList with every problem found
/// (each CRD2xxx with file:line:col), never a partial policy.
CORDON_API Policy load_policy_file(const std::filesystem::path& file);

/// Loads a policy from text; `name` decides the format by extension and appears in messages.
/// Relative `extends` resolve against `base_dir`.
CORDON_API Policy load_policy_text(const std::string& text, const std::string& name,
                                   const std::filesystem::path& base_dir = {});

/// Loads a shipped preset by name ("standard"). Throws ErrorList (CRD2007) for an unknown one.
CORDON_API Policy load_preset(const std::string& name);

/// True when `ref` names a policy file: it contains '/' or ends in .toml, .yaml or .yml (the
/// rule of `extends`). Anything else names a shipped preset.
CORDON_API bool names_policy_file(std::string_view ref);

/// Loads the policy `ref` names wherever a policy is given (--policy, a request's "policy",
/// `policy check`): a file by names_policy_file(), else a shipped preset. Throws ErrorList; an
/// unknown preset is CRD2007 listing the presets.
CORDON_API Policy load_policy(const std::string& ref);

/// What a loaded policy holds that is valid but will likely not work as meant, as warnings
/// (CRD2017) located where the key was written: `connect_ports` while names cannot resolve,
/// the advisory `blocked_imports`. `policy check` prints them. Pure.
CORDON_API std::vector<Error> policy_warnings(const Policy& policy);

/// What `{workspace}` and `~` stand for when paths are expanded.
struct PathContext {
  std::filesystem::path workspace;  ///< absolute
  std::filesystem::path home;       ///< the invoking user's home, absolute
};

/// Expands `~`, `{workspace}` and relative paths (relative to the workspace) in the filesystem
/// section, normalising each path lexically. Pure: touches no file. Throws ErrorList on a path
/// that cannot be expanded (e.g. "~other").
CORDON_API Policy resolve_paths(Policy policy, const PathContext& ctx);

/// `policy` (resolved) for a command that runs as another user than cordon's, whose home is
/// `command_home`: the grants written as `~` paths apply to that home instead, and the blocked
/// `~` paths to both homes. Unchanged when `command_home` is not absolute. Pure.
CORDON_API Policy for_command_home(Policy policy, const std::filesystem::path& command_home);

/// How `path` (an entry of the resolved read, write or blocked list) was written: "~/x" for one
/// that came from `~`, else itself. Pure.
CORDON_API std::string written_form(const Filesystem& fs, const std::string& path);

}  // namespace cordon
