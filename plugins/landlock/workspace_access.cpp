// The workspace's permission bits against the command's identity.
#include "workspace_access.hpp"

#include <sys/stat.h>
#include <sys/xattr.h>

#include <cerrno>
#include <cstdio>

namespace cordon::landlock {

namespace {

std::string octal(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

}  // namespace

std::optional<DirAccess> dir_access(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return std::nullopt;
  DirAccess out{st.st_uid, st.st_gid, st.st_mode, false};
  // The bits decide alone where there is no access ACL (ENODATA) or can be none (ENOTSUP);
  // any other answer leaves it open.
  bool none = ::getxattr(dir.c_str(), "system.posix_acl_access", nullptr, 0) < 0 &&
              (errno == ENODATA || errno == ENOTSUP);
  out.acl = !none;
  return out;
}

bool may_write(uid_t uid, gid_t gid, const DirAccess& dir) {
  const mode_t wx = S_IWOTH | S_IXOTH;
  int shift = uid == dir.uid ? 6 : gid == dir.gid ? 3 : 0;
  return ((dir.mode >> shift) & wx) == wx;
}

std::optional<std::string> unwritable_workspace_note(const Identity& who, const DirAccess& dir,
                                                     const std::string& workspace) {
  // Unprivileged, the command is the caller itself, with the caller's own groups.
  if (!who.parent_writes_maps || dir.acl) return std::nullopt;
  if (may_write(who.uid, who.gid, dir)) return std::nullopt;
  return "the command runs as uid " + std::to_string(who.uid) +
         " and cannot write its workspace '" + workspace + "' (owner uid " +
         std::to_string(dir.uid) + ", gid " + std::to_string(dir.gid) + ", mode " +
         octal(dir.mode) + "): set backends.landlock.uid (and gid) to a user that may write it, " +
         "or give the workspace to uid " + std::to_string(who.uid);
}

}  // namespace cordon::landlock
