// The command's identity and its `~`, for a run and for its preview.
#include "run_identity.hpp"

#include <cordon/policy_loader.hpp>
#include <cordon/sdk/policy.hpp>
#include <cordon/user_db.hpp>

#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "workspace_access.hpp"

namespace cordon::landlock {

namespace {

std::string uid_text(uid_t uid) { return "uid " + std::to_string(uid); }

// The lists of the policy that hold `path`, as the preview names them.
std::string kinds_of(const Filesystem& f, const std::string& path) {
  std::string kinds;
  auto add = [&](const std::vector<std::string>& list, const char* kind) {
    for (const auto& p : list)
      if (p == path) {
        kinds += kinds.empty() ? kind : std::string(", ") + kind;
        return;
      }
  };
  add(f.read, "read");
  add(f.write, "write");
  add(f.blocked, "blocked");
  return kinds;
}

// "~/.ssh (blocked): /root/.ssh and /home/u/.ssh" for each `~` path of the policy.
std::vector<std::string> home_lines(const Plan& plan, const std::optional<Plan>& rehomed) {
  std::vector<std::string> lines;
  const Filesystem& f = plan.policy.filesystem;
  for (const auto& [expanded, rest] : f.from_home) {
    std::string kinds = kinds_of(f, expanded);
    if (kinds.empty()) continue;
    std::string line = written_form(f, expanded) + " (" + kinds + "): ";
    if (!rehomed) {
      lines.push_back(line + expanded);
      continue;
    }
    std::string theirs = rehomed->host_home.string() + rest;
    bool blocked = kinds.find("blocked") != std::string::npos;
    bool granted = kinds != "blocked";
    if (blocked && granted)
      line += expanded + " and " + theirs + " blocked, " + theirs + " granted";
    else if (blocked)
      line += expanded + " and " + theirs;
    else
      line += theirs;
    lines.push_back(line);
  }
  return lines;
}

}  // namespace

Identity identity_for(const Plan& plan, const Settings& settings, std::vector<std::string>& notes) {
  auto dir = dir_access(plan.workspace.string());
  IdentityInput in{::geteuid(),        ::getegid(), dir ? dir->uid : 0,
                   dir ? dir->gid : 0, settings,    lookup_primary_gid};
  if (in.euid != 0 && (settings.uid || settings.gid))
    notes.push_back("backends.landlock.uid/gid ignored: cordon is not root");
  Identity identity = choose_identity(in);
  // A workspace the policy does not grant is read-only anyway: nothing to say then.
  if (dir && grants_write(plan.policy, plan.workspace))
    if (auto note = unwritable_workspace_note(identity, *dir, plan.workspace.string()))
      notes.push_back(*note);
  return identity;
}

std::optional<Plan> for_command_user(const Plan& plan, const Identity& identity,
                                     std::vector<std::string>& notes) {
  if (identity.uid == ::geteuid() || plan.policy.filesystem.from_home.empty()) return std::nullopt;
  auto user = find_user(identity.uid);
  std::error_code ec;
  if (user && user->home == plan.host_home) return std::nullopt;
  if (!user || user->home.empty() || user->home.front() != '/' ||
      !std::filesystem::is_directory(user->home, ec)) {
    notes.push_back("the command runs as " + uid_text(identity.uid) + ", which has no home " +
                    "directory here: '~' is '" + plan.host_home.string() + "'");
    return std::nullopt;
  }
  Plan other = plan;
  other.policy = for_command_home(plan.policy, user->home);
  other.host_home = user->home;
  notes.push_back("the command runs as " + uid_text(identity.uid) + ": '~' is '" + user->home +
                  "' for its grants and HOME; blocked '~' paths apply to '" +
                  plan.host_home.string() + "' and '" + user->home + "'");
  return other;
}

RunPreview preview_run(const Plan& plan) {
  RunPreview preview;
  Identity id = identity_for(plan, parse_settings(plan.settings), preview.warnings);
  auto& facts = preview.facts;
  facts.push_back("the command runs as " + uid_text(id.uid) + ", gid " + std::to_string(id.gid) +
                  ": " + id.reason);
  auto rehomed = for_command_user(plan, id, facts);
  auto homes = home_lines(plan, rehomed);
  facts.insert(facts.end(), homes.begin(), homes.end());
  return preview;
}

}  // namespace cordon::landlock
