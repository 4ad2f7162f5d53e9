// process.blocked_commands on the host mounts: a blocked program that reaches the container
// through the workspace, a filesystem.write path or an operator mount is a host file, which the
// image's stat (exec_block.hpp) never sees. Each PATH candidate is resolved as the container
// would resolve it — through the mounts, following their symlinks on the host — and the file it
// reaches is masked where it lies in a mount. What cannot be masked refuses the run (CRD1003).
// Reads the host (lstat, readlink); no daemon calls.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "container_spec.hpp"
#include "exec_block.hpp"

namespace cordon::docker {

/// Where a container path leads.
struct ContainerPath {
  enum class Where { missing, mount, image } where = Where::missing;
  std::string path;        ///< the container path reached (no symlink left in a mount)
  std::string host;        ///< its host path, when in a mount
  bool via_mount = false;  ///< a step of the resolution was on a host mount
};

/// The mount that holds container path `path` (the one whose target is the longest prefix of
/// it, as mounts stack), or null when the image's root does; `rest` gets the remainder with its
/// leading '/'. Pure.
const HostMount* mount_holding(const std::vector<HostMount>& mounts, const std::string& path,
                               std::string& rest);

/// Resolves `path` (absolute) in a container whose host mounts are `mounts`: components in a
/// mount are looked at on the host (symlinks followed, absolute ones from the container's root,
/// at most 40); the first component that is the image's ends the walk (`Where::image`, the rest
/// joined lexically).
ContainerPath resolve_in_container(const std::string& path, const std::vector<HostMount>& mounts);

/// The blocked programs the host mounts put in the container.
struct MountedPrograms {
  std::vector<std::string> masks;        ///< container paths of files in a mount, to mask
  std::vector<std::string> image_links;  ///< image paths that links in a mount lead to
  std::vector<std::string> notes;        ///< hard links that cannot be masked by name
  /// Every container path known to be or lead to a masked program (the image's files, the
  /// links to its multi-call programs, the mounts' files): an exec refused there is explained.
  std::vector<std::string> masked_programs;
  /// Links in a mount (first) to an image file of another name (second): allowed only when that
  /// file is a multi-call program that provides the name (check_foreign_links()).
  std::vector<std::pair<std::string, std::string>> foreign_links;
};

/// Resolves each candidate (exec_candidates(): every PATH and system directory joined with each
/// blocked name) through the mounts.
MountedPrograms mounted_programs(const std::vector<std::string>& candidates,
                                 const std::vector<HostMount>& mounts);

/// Throws CRD1003 for a link in a mount to an image file of another name that is not one of the
/// image's multi-call programs providing a blocked name (`image`): masking it would block that
/// program under every name.
void check_foreign_links(const MountedPrograms& mounted, const ExecMasks& image);

/// Moves the image's masks that the mounts shadow (or that the image links into a mount) onto
/// the mounts: `image` keeps only paths of the image itself; the mount files they reach join
/// `mounted`. Throws CRD1003 for a chain of links that leaves a mount for the image again.
void settle_image_masks(const std::vector<HostMount>& mounts, ExecMasks& image,
                        MountedPrograms& mounted);

}  // namespace cordon::docker
