// Who the command runs as (cordon/sdk/identity.hpp): the rule, and its inputs from this host.
#include <sys/stat.h>
#include <unistd.h>
#include <cordon/sdk/identity.hpp>
#include <cordon/user_db.hpp>

namespace cordon::sdk {

namespace {

gid_t group_for(uid_t uid, const CommandUserInput& in, std::optional<gid_t> fallback) {
  if (in.gid) return *in.gid;
  if (in.primary_gid)
    if (auto g = in.primary_gid(uid); g && *g != 0) return *g;
  if (fallback && *fallback != 0) return *fallback;
  return kNobody;
}

}  // namespace

CommandUser choose_command_user(const CommandUserInput& in) {
  CommandUser who;
  if (in.euid != 0) {
    who.uid = in.euid;
    who.gid = in.egid;
    who.reason = "the calling user (uid " + std::to_string(in.euid) + ")";
    return who;
  }
  who.other_user = true;
  if (in.uid) {
    who.uid = *in.uid;
    who.gid = group_for(who.uid, in, std::nullopt);
    who.reason = in.setting + " = " + std::to_string(who.uid);
  } else if (in.workspace_uid != 0) {
    who.uid = in.workspace_uid;
    who.gid = group_for(who.uid, in, in.workspace_gid);
    who.reason = "the workspace's owner (uid " + std::to_string(who.uid) + ")";
  } else {
    who.uid = kNobody;
    who.gid = in.gid ? *in.gid : kNobody;
    who.reason = "nobody (uid 65534): the workspace belongs to root";
  }
  return who;
}

CommandUser command_user(const std::filesystem::path& workspace, std::optional<uid_t> uid,
                         std::optional<gid_t> gid, const std::string& setting) {
  struct stat st {};
  bool known = ::lstat(workspace.c_str(), &st) == 0;
  CommandUserInput in;
  in.euid = ::geteuid();
  in.egid = ::getegid();
  in.workspace_uid = known ? st.st_uid : 0;
  in.workspace_gid = known ? st.st_gid : 0;
  in.uid = uid;
  in.gid = gid;
  in.setting = setting;
  in.primary_gid = [](uid_t u) -> std::optional<gid_t> {
    auto entry = find_user(u);
    return entry ? std::optional<gid_t>(entry->gid) : std::nullopt;
  };
  return choose_command_user(in);
}

}  // namespace cordon::sdk
