// The file tree as the sandbox's keeper reads it. The keeper builds the tree while cordon does
// the rest of the set-up, but it was started before the run was planned: the Layout is copied
// into memory shared with it (a memfd both map), its pointers written as the keeper sees them.
// It is read there with no allocation.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "layout.hpp"

namespace cordon::landlock {

/// A MountStep, in shared memory.
struct FlatStep {
  MountStep::Kind kind = MountStep::Kind::bind;
  const char* target = "";
  const char* source = "";
  bool writable = false;
  bool dir = true;
  bool create_target = true;
  dev_t dev = 0;
  ino_t ino = 0;
};

/// A Mask, in shared memory.
struct FlatMask {
  const char* path = "";
  bool dir = false;
  dev_t dev = 0;
  ino_t ino = 0;
};

/// A symlink on the root tmpfs: path, text.
struct FlatLink {
  const char* path = "";
  const char* text = "";
};

/// A Layout, in shared memory, with what building it needs besides.
struct FlatLayout {
  bool read_host = false;
  bool private_tmp = true;
  const char* home = "";
  HomeKind home_kind = HomeKind::root_dir;
  std::span<const FlatLink> symlinks;
  std::span<const FlatStep> steps;
  std::span<const char* const> pins;
  std::span<const FlatMask> masks;
  std::span<const char* const> devices;
  const char* workspace = "";
  std::uint64_t tmpfs_bytes = 0;
  /// Who the files made for the tree belong to (the sandbox's identity).
  uid_t uid = 0;
  gid_t gid = 0;
  /// Room for the cloned trees' descriptors: one per step, then one per device (-1 if absent).
  std::span<int> trees;
};

/// A fixed region of memory shared, through its memfd, with another process that maps it at
/// an address of its own (the peer's); copies are bump-allocated in it, and it is reused by
/// resetting it.
class SharedArena {
 public:
  /// Maps `bytes` of a new memfd (pages are only used when written). Throws cordon::Error
  /// (CRD1003).
  explicit SharedArena(std::size_t bytes);
  ~SharedArena();
  SharedArena(const SharedArena&) = delete;
  SharedArena& operator=(const SharedArena&) = delete;

  /// Room for `n` objects of T; throws cordon::Error (CRD1003) when the arena is full.
  template <class T>
  T* allocate(std::size_t n) {
    return static_cast<T*>(raw(n * sizeof(T), alignof(T)));
  }
  /// A terminated copy of `s`; the pointer is the peer's (for storing, not for reading here).
  const char* copy(const std::string& s);
  /// `p` (in this arena) as the peer sees it.
  template <class T>
  T* peer(T* p) const noexcept {
    return reinterpret_cast<T*>(reinterpret_cast<std::uintptr_t>(p) - base_address() + peer_);
  }
  /// The address the peer maps the arena at (until set: this process's own).
  void set_peer(std::uintptr_t address) noexcept { peer_ = address; }
  /// The first object allocated after the last reset.
  void* base() const noexcept { return base_; }
  /// The memfd (close-on-exec).
  int fd() const noexcept { return fd_; }
  std::size_t size() const noexcept { return size_; }
  void reset() noexcept { used_ = 0; }

 private:
  void* raw(std::size_t bytes, std::size_t align);
  std::uintptr_t base_address() const noexcept { return reinterpret_cast<std::uintptr_t>(base_); }

  int fd_ = -1;
  std::uintptr_t peer_ = 0;
  char* base_ = nullptr;
  std::size_t size_ = 0;
  std::size_t used_ = 0;
};

/// Copies `layout`, with the identity its files belong to, into `arena` (after a reset), every
/// pointer in it the arena's peer's; the result is at arena.base(). Throws cordon::Error
/// (CRD1003) when it does not fit.
const FlatLayout* flatten(const Layout& layout, uid_t uid, gid_t gid, SharedArena& arena);

/// Everything flatten() hands the keeper, as one string: two trees with equal keys are built
/// alike (the same mounts on the same host objects, the same files for the same owner). Pure.
std::string tree_key(const Layout& layout, uid_t uid, gid_t gid);

}  // namespace cordon::landlock
