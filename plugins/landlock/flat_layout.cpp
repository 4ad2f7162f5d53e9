// Copying a Layout into memory shared with the keeper.
#include "flat_layout.hpp"

#include <cordon/sdk/error.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

namespace cordon::landlock {

SharedArena::SharedArena(std::size_t bytes) : size_(bytes) {
  auto fail = [](const char* what) {
    return Error(code::kIsolationFailed,
                 std::string("cannot ") + what +
                     " the memory shared with the sandbox's keeper: " + std::strerror(errno));
  };
  fd_ = ::memfd_create("cordon-landlock-tree", MFD_CLOEXEC);
  if (fd_ < 0) throw fail("create");
  void* p = MAP_FAILED;
  if (::ftruncate(fd_, static_cast<off_t>(bytes)) == 0)
    p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd_, 0);
  if (p == MAP_FAILED) {
    Error e = fail("map");
    ::close(fd_);
    throw e;
  }
  base_ = static_cast<char*>(p);
  peer_ = base_address();
}

SharedArena::~SharedArena() {
  if (base_ != nullptr) ::munmap(base_, size_);
  if (fd_ >= 0) ::close(fd_);
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
  return peer(out);
}

namespace {

std::span<const char* const> copy_strings(const std::vector<std::string>& in, SharedArena& arena) {
  const char** out = arena.allocate<const char*>(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) out[i] = arena.copy(in[i]);
  return {arena.peer(out), in.size()};
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
  flat->symlinks = {arena.peer(links), layout.symlinks.size()};
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
  flat->steps = {arena.peer(steps), layout.steps.size()};
  flat->pins = copy_strings(layout.pins, arena);
  auto* masks = arena.allocate<FlatMask>(layout.masks.size());
  for (std::size_t i = 0; i < layout.masks.size(); ++i) {
    const auto& m = layout.masks[i];
    masks[i] = {arena.copy(m.path), m.dir, m.dev, m.ino};
  }
  flat->masks = {arena.peer(masks), layout.masks.size()};
  flat->devices = copy_strings(layout.devices, arena);
  flat->workspace = arena.copy(layout.workspace);
  flat->tmpfs_bytes = layout.tmpfs_bytes;
  flat->uid = uid;
  flat->gid = gid;
  std::size_t trees = layout.steps.size() + layout.devices.size();
  int* fds = arena.allocate<int>(trees);
  for (std::size_t i = 0; i < trees; ++i) fds[i] = -1;
  flat->trees = {arena.peer(fds), trees};
  return flat;
}

namespace {

// Length-prefixed, so that no two different field lists give the same string.
void put(std::string& out, const std::string& s) {
  out += std::to_string(s.size());
  out += ':';
  out += s;
}

void put(std::string& out, std::uint64_t n) { put(out, std::to_string(n)); }

}  // namespace

std::string tree_key(const Layout& layout, uid_t uid, gid_t gid) {
  std::string k;
  put(k, (layout.read_host ? 1U : 0U) | (layout.private_tmp ? 2U : 0U));
  put(k, layout.home);
  put(k, static_cast<std::uint64_t>(layout.home_kind));
  put(k, layout.symlinks.size());
  for (const auto& [path, text] : layout.symlinks) {
    put(k, path);
    put(k, text);
  }
  put(k, layout.steps.size());
  for (const auto& s : layout.steps) {
    put(k, static_cast<std::uint64_t>(s.kind));
    put(k, s.target);
    put(k, s.source);
    put(k, (s.writable ? 1U : 0U) | (s.dir ? 2U : 0U) | (s.create_target ? 4U : 0U));
    put(k, static_cast<std::uint64_t>(s.dev));
    put(k, static_cast<std::uint64_t>(s.ino));
  }
  put(k, layout.pins.size());
  for (const auto& p : layout.pins) put(k, p);
  put(k, layout.masks.size());
  for (const auto& m : layout.masks) {
    put(k, m.path);
    put(k, m.dir ? 1U : 0U);
    put(k, static_cast<std::uint64_t>(m.dev));
    put(k, static_cast<std::uint64_t>(m.ino));
  }
  put(k, layout.devices.size());
  for (const auto& d : layout.devices) put(k, d);
  put(k, layout.workspace);
  put(k, layout.tmpfs_bytes);
  put(k, uid);
  put(k, gid);
  return k;
}

}  // namespace cordon::landlock
