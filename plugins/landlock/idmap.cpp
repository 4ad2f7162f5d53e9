// Identity choice (pure); the maps are written by child_io.hpp.
#include "idmap.hpp"

#include <cordon/sdk/identity.hpp>
#include <cordon/user_db.hpp>

namespace cordon::landlock {

std::string Identity::uid_map() const {
  return std::to_string(uid) + " " + std::to_string(uid) + " 1\n";
}

std::string Identity::gid_map() const {
  return std::to_string(gid) + " " + std::to_string(gid) + " 1\n";
}

// The SDK's rule (cordon/sdk/identity.hpp), with this backend's settings.
Identity choose_identity(const IdentityInput& in) {
  sdk::CommandUserInput input{
      in.euid,         in.egid,         in.workspace_uid,        in.workspace_gid,
      in.settings.uid, in.settings.gid, "backends.landlock.uid", in.primary_gid};
  sdk::CommandUser who = sdk::choose_command_user(input);
  Identity id;
  id.uid = who.uid;
  id.gid = who.gid;
  id.parent_writes_maps = who.other_user;
  id.reason = who.reason;
  return id;
}

std::optional<gid_t> lookup_primary_gid(uid_t uid) {
  auto entry = find_user(uid);
  return entry ? std::optional<gid_t>(entry->gid) : std::nullopt;
}

}  // namespace cordon::landlock
