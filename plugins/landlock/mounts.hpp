// Carrying out a Layout in the sandbox's keeper. Runs in a child of a possibly multi-threaded
// process: raw system calls only, no allocation.
#pragma once

#include "flat_layout.hpp"

namespace cordon::landlock {

/// Which step failed, on what, and why.
struct MountFailure {
  const char* step = "";
  const char* path = "";
  int err = 0;
};

/// Makes every mount of the (new) mount namespace private. Independent of the layout.
bool make_private(MountFailure& failure) noexcept;

/// Phase 1, in the private mount namespace before anything is mounted: clones each bind
/// source (recursive, read-only unless writable, nosuid, nodev) and each device node into
/// detached trees, kept in layout.trees.
bool clone_sources(const FlatLayout& layout, MountFailure& failure) noexcept;

/// Phase 2: mounts the new root, a tmpfs, and switches to it (the host's root stays at
/// /.old). From then on the mount namespace can be joined: its root is the new one.
bool enter_root(const FlatLayout& layout, MountFailure& failure) noexcept;

/// Phase 3: attaches the trees in the new root and makes /dev, /proc, /tmp, HOME and the
/// symlinks. Files created here must belong to the sandbox's identity (the file-system ids
/// are its). The caller must be in the pid namespace the fresh /proc is for.
bool build_root(const FlatLayout& layout, MountFailure& failure) noexcept;

/// Phase 4: masks the blocked paths and detaches the host's root. Until it is done, nothing
/// untrusted may run in the tree.
bool seal_root(const FlatLayout& layout, MountFailure& failure) noexcept;

}  // namespace cordon::landlock
