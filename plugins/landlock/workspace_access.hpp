// Whether the command's user can write the workspace the policy grants. As root, cordon runs
// the command as the workspace's owner, `backends.landlock.uid`, or nobody: a workspace that
// belongs to root is then granted but not writable, and only its permission bits say so.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "idmap.hpp"

namespace cordon::landlock {

/// What decides who may write a directory, as stat(2) and its xattrs tell.
struct DirAccess {
  uid_t uid = 0;
  gid_t gid = 0;
  mode_t mode = 0;
  bool acl = false;  ///< a POSIX access ACL: the bits alone do not decide
};

/// stat(2) of `dir` and whether it carries an access ACL; nullopt when it cannot be read.
std::optional<DirAccess> dir_access(const std::string& dir);

/// True when a process of `uid` whose only group is `gid` may write into (and enter) a
/// directory by its permission bits: the owner's class when it is the owner, the group's when
/// it is in the group, the others' otherwise, as the kernel checks. Pure.
bool may_write(uid_t uid, gid_t gid, const DirAccess& dir);

/// The run's note when cordon is root and the command's identity cannot write the workspace
/// (when the policy grants it: run_identity.cpp asks grants_write first), with the way
/// out; nullopt otherwise, also when an ACL decides, which the bits cannot judge. Pure.
std::optional<std::string> unwritable_workspace_note(const Identity& who, const DirAccess& dir,
                                                     const std::string& workspace);

}  // namespace cordon::landlock
