// What the run needs from the host before the container is made: the identity, which write
// and blocked paths exist, and the empty mode-000 masks. Makes syscalls; no daemon calls.
#pragma once

#include <cordon/sdk/backend.hpp>
#include <cordon/sdk/private_dir.hpp>

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "container_spec.hpp"
#include "mount_identity.hpp"
#include "settings.hpp"

namespace cordon::docker {

/// The container's user: the setting, else the `workspace`'s owner (as cordon holds it) when
/// that is not root, with its group unless that is 0, else 65534:65534 (nobody). Never root
/// as written; the waiter refuses a name the image resolves to root.
std::string container_user(const Settings& settings, const SourceIdentity& workspace);

/// filesystem.write paths that exist on the host (a bind source must exist), lexically normal,
/// each opened once without following symlinks and held in `held` (source_identity(); CRD4004
/// for one that passes through a symlink); notes for the others. The `{workspace}` grant is
/// opened so too.
std::vector<std::string> existing_write_paths(const Plan& plan, std::vector<std::string>& notes,
                                              SourceIdentities& held);

/// The policy's blocked paths as they are on the host, with the other names (hard links) of
/// their files (other_names_to_mask); a note for a blocked directory too large to check all.
/// Throws CRD4004 for one that passes through a symlink in a writable directory (the command
/// could swap it), naming the link.
std::vector<BlockedPath> blocked_paths(const Plan& plan, std::vector<std::string>& notes);

/// `plan` with the default state directories of the user the container runs as added to its
/// protected paths, when that is a host uid other than cordon's (command_user_state()): the uid
/// `user` gives, or `named_uid`, the one the image's /etc/passwd gives a user named by `user`
/// (image_user.hpp; the daemon shares the host's uids).
Plan with_command_user_state(const Plan& plan, const Settings& settings,
                             const SourceIdentity& workspace, std::optional<uid_t> named_uid);

/// cordon's own state (plan.protected_paths) that exists on the host, each as given and, when a
/// link on the way leads elsewhere, as it really is: what a mount must not show. Throws CRD4004
/// for one that passes through a symlink in a writable directory (a policy file named through
/// a link in the workspace), naming the link.
std::vector<BlockedPath> own_state(const Plan& plan);

/// The paths of `paths`. Pure.
std::vector<std::string> paths_of(const std::vector<BlockedPath>& paths);

/// Refuses (CRD1003) a run in which one of cordon's own state directories does not exist yet
/// but would lie in a writable mount, by its name or where its existing levels lead: the command
/// could make it, and a later cordon of the same user would trust what it found there.
void refuse_missing_state(const Plan& plan, const std::vector<HostMount>& mounts);

/// The empty mode-000 file and directory that masks are bound from, held open.
struct Masks {
  SourceIdentity file;
  SourceIdentity dir;
};

/// Makes (once) an empty mode-000 file and directory in `dir` for masking, and checks them
/// through descriptors opened relative to it without following links: cordon's, empty, mode
/// 000. Throws CRD1003 when they are not so.
Masks ensure_masks(const PrivateDir& dir);

/// A fresh random run id: 16 hex digits.
std::string new_run_id();

}  // namespace cordon::docker
