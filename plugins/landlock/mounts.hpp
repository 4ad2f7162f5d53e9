// Carrying out a Layout inside the sandbox's init. Runs in a child of a possibly
// multi-threaded process: raw system calls only, no allocation.
#pragma once

#include "layout.hpp"

#include <cstddef>

namespace cordon::landlock {

/// Which step failed, on what, and why.
struct MountFailure {
  const char* step = "";
  const char* path = "";
  int err = 0;
};

/// Descriptors of the cloned source trees: one per step, then one per device (-1 if absent).
/// The caller provides the storage (sized before the clone) so the child never allocates.
struct SourceTrees {
  int* fds = nullptr;
  std::size_t count = 0;
};

/// Phase 1, in the new mount namespace before anything is mounted: makes every mount
/// private and clones each bind source (recursive, read-only unless writable, nosuid, nodev)
/// and each device node into detached trees.
bool clone_sources(const Layout& layout, SourceTrees trees, MountFailure& failure) noexcept;

/// Phase 2: builds the new root on a tmpfs, attaches the trees, makes /dev, /proc, /tmp and
/// HOME, masks, switches root (the host's root is detached) and enters the workspace. The
/// identity must already be the sandbox's (files created here belong to it).
bool build_root(const Layout& layout, SourceTrees trees, MountFailure& failure) noexcept;

}  // namespace cordon::landlock
