// Copying a Layout into memory shared with the keeper.
#include "flat_layout.hpp"

#include <cordon/sdk/error.hpp>

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <new>

namespace cordon::landlock {

SharedArena::SharedArena(std::size_t bytes) : size_(bytes) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    throw Error(
        code::kIsolationFailed,
        std::string("cannot map memory shared with the sandbox's keeper: ") + std::strerror(errno));
  base_ = static_cast<char*>(p);
}

SharedArena::~SharedArena() {
  if (base_ != nullptr) ::munmap(base_, size_);
}

void* SharedArena::raw(std::size_t bytes, std::size_t align) {
  std::size_t start = (used_ + align - 1) / align * align;
  if (start > size_ || bytes > size_ - start)
    throw Error(code::kIsolationFailed,
                "the sandbox's file tree is too large to hand to its keeper (" +
                    std::to_string(size_ / 1024) + " KiB)",
                "grant fewer paths (filesystem.read, filesystem.write, blocked)");
  used_ = start + bytes;
  return base_ + start;
}

const char* SharedArena::copy(const std::string& s) {
  char* out = allocate<char>(s.size() + 1);
  std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

namespace {

std::span<const char* const> copy_strings(const std::vector<std::string>& in, SharedArena& arena) {
  const char** out = arena.allocate<const char*>(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) out[i] = arena.copy(in[i]);
  return {out, in.size()};
}

}  // namespace

const FlatLayout* flatten(const Layout& layout, uid_t uid, gid_t gid, SharedArena& arena) {
  arena.reset();
  auto* flat = new (arena.allocate<FlatLayout>(1)) FlatLayout;
  flat->read_host = layout.read_host;
  flat->private_tmp = layout.private_tmp;
  flat->home = arena.copy(layout.home);
  flat->home_kind = layout.home_kind;
  auto* links = arena.allocate<FlatLink>(layout.symlinks.size());
  for (std::size_t i = 0; i < layout.symlinks.size(); ++i)
    links[i] = {arena.copy(layout.symlinks[i].first), arena.copy(layout.symlinks[i].second)};
  flat->symlinks = {links, layout.symlinks.size()};
  auto* steps = arena.allocate<FlatStep>(layout.steps.size());
  for (std::size_t i = 0; i < layout.steps.size(); ++i) {
    const auto& s = layout.steps[i];
    steps[i] = {s.kind,
                arena.copy(s.target),
                arena.copy(s.source),
                s.writable,
                s.dir,
                s.create_target,
                s.dev,
                s.ino};
  }
  flat->steps = {steps, layout.steps.size()};
  flat->pins = copy_strings(layout.pins, arena);
  auto* masks = arena.allocate<FlatMask>(layout.masks.size());
  for (std::size_t i = 0; i < layout.masks.size(); ++i) {
    const auto& m = layout.masks[i];
    masks[i] = {arena.copy(m.path), m.dir, m.dev, m.ino};
  }
  flat->masks = {masks, layout.masks.size()};
  flat->devices = copy_strings(layout.devices, arena);
  flat->workspace = arena.copy(layout.workspace);
  flat->tmpfs_bytes = layout.tmpfs_bytes;
  flat->uid = uid;
  flat->gid = gid;
  std::size_t trees = layout.steps.size() + layout.devices.size();
  int* fds = arena.allocate<int>(trees);
  for (std::size_t i = 0; i < trees; ++i) fds[i] = -1;
  flat->trees = {fds, trees};
  return flat;
}

}  // namespace cordon::landlock
