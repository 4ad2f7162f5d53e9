// The sandbox's file tree, planned before anything is mounted. Pure: from the host view to a
// list of steps the sandbox's keeper carries out (mounts.cpp).
//
// The root is always a fresh tmpfs. Into it go: the readable and writable host paths as bind
// mounts at their own paths (read-only unless writable), or every top-level entry of the
// host's root when read = "host"; a private /tmp (unless the policy gives the host's); a
// minimal /dev; a fresh /proc; the private HOME. Blocked paths and blocked programs are then
// masked with an empty read-only mode-000 directory or file.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cordon::landlock {

struct HostView;  // host_paths.hpp

/// One mount the keeper makes, in order (parents before children).
struct MountStep {
  enum class Kind { bind, home_tmpfs } kind = Kind::bind;
  std::string target;         ///< path inside the sandbox
  std::string source;         ///< host path (bind)
  bool writable = false;      ///< bind: read-write; otherwise read-only
  bool dir = true;            ///< bind: a directory (else a file)
  bool create_target = true;  ///< the target lies on a tmpfs of ours: create it and its parents
  dev_t dev = 0;              ///< bind: the source's identity when resolved, checked again
  ino_t ino = 0;              ///< by the keeper before it binds it (0: not checked)
  bool operator==(const MountStep&) const = default;
};

/// A blocked object hidden in the sandbox: an empty read-only mode-000 mount goes on exactly
/// the object resolved on the host (its identity is checked again), or the run is refused.
struct Mask {
  std::string path;
  bool dir = false;
  dev_t dev = 0;
  ino_t ino = 0;
  bool operator==(const Mask& o) const { return path == o.path; }
};

/// Where HOME lives.
enum class HomeKind {
  host,      ///< filesystem.home = "host": the host's home, visible as the policy says
  root_dir,  ///< a 0700 directory on the root tmpfs
  tmpfs,     ///< a 0700 tmpfs mounted over the host's home (which a bind made visible)
};

/// The whole tree.
struct Layout {
  bool read_host = false;
  bool private_tmp = true;
  std::string home;  ///< HOME inside the sandbox
  HomeKind home_kind = HomeKind::root_dir;
  std::vector<std::pair<std::string, std::string>> symlinks;  ///< path, text; on the root tmpfs
  std::vector<MountStep> steps;
  /// Directories bound onto themselves before the masks, so that the command cannot rename or
  /// remove them (EBUSY): the ancestors of each mask that lie inside a writable bind. A later
  /// run then finds a blocked path where the policy names it. Parents first.
  std::vector<std::string> pins;
  std::vector<Mask> masks;           ///< blocked objects in the tree (none beneath another)
  std::vector<std::string> devices;  ///< names under /dev bound from the host
  std::string workspace;             ///< the command's working directory
  /// Size of the root tmpfs, and of HOME's own tmpfs when it has one; 0: the kernel's default.
  std::uint64_t tmpfs_bytes = 0;
};

/// Choices that do not come from the host view.
struct LayoutOptions {
  bool home_private = true;
  /// What the sandbox's tmpfs mounts may hold together (the root's with /tmp, HOME's); 0: the
  /// kernel's default for each.
  std::uint64_t tmpfs_bytes = 0;
};

/// Where HOME goes when the host's home cannot be replaced in place.
inline constexpr const char* kFallbackHome = "/cordon-home";

/// Plans the tree.
Layout plan_layout(const HostView& view, const LayoutOptions& options);

/// True when `path` is `ancestor` or lies beneath it (lexically).
bool is_within(const std::string& path, const std::string& ancestor);

}  // namespace cordon::landlock
