// A keeper that shares cordon's memory (keeper_shared.hpp).
#include "keeper_shared.hpp"

#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>
#include <new>

#include "keeper_exec.hpp"  // kKeeperFailed

// Clang names its sanitizers through __has_feature rather than GCC's macros.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define CORDON_SANITIZED 1
#endif
#endif

#if defined(__x86_64__) && defined(__GLIBC__) && !defined(CORDON_SANITIZED) && \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35)) &&            \
    !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define CORDON_SHARED_KEEPER 1
#include <link.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/rseq.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#endif

namespace cordon::landlock {

#ifdef CORDON_SHARED_KEEPER

namespace {

constexpr std::uintptr_t kPage = 4096;
constexpr std::uintptr_t kStack = 128 * 1024;
constexpr std::uintptr_t kTcbAlign = 64;  // glibc's struct pthread
constexpr std::size_t kMapText = 128;     // an unprivileged cordon's "U U 1\n" map lines

std::uintptr_t round_up(std::uintptr_t v, std::uintptr_t to) { return (v + to - 1) / to * to; }

std::uintptr_t thread_pointer() noexcept {
  std::uintptr_t tp;
  asm("mov %%fs:0, %0" : "=r"(tp));
  return tp;
}

// The main thread's thread data, as x86-64 glibc lays it out (TLS variant II): the static TLS
// block right below the thread pointer, the thread control block from it up.
struct ThreadData {
  std::uintptr_t below = 0;  ///< bytes below the thread pointer: the PT_TLS segment, aligned
  std::uintptr_t above = 0;  ///< bytes from it: the control block up to its rseq area's end
  std::uintptr_t align = kTcbAlign;
};

// False when this is not what can be copied: a dynamic executable (errno is then the C
// library's, in another block), a layout glibc no longer has.
bool read_thread_data(ThreadData& out) noexcept {
  const auto* ph = reinterpret_cast<const ElfW(Phdr)*>(::getauxval(AT_PHDR));
  const unsigned long count = ::getauxval(AT_PHNUM);
  const ElfW(Phdr)* tls = nullptr;
  for (unsigned long i = 0; ph != nullptr && i < count; ++i)
    if (ph[i].p_type == PT_TLS) tls = &ph[i];
  if (tls == nullptr) return false;
  out.align = tls->p_align > kTcbAlign ? tls->p_align : kTcbAlign;
  out.below = round_up(tls->p_memsz, tls->p_align > 0 ? tls->p_align : 1);
  const std::uintptr_t tp = thread_pointer();
  const auto err = reinterpret_cast<std::uintptr_t>(&errno);
  if (err < tp - out.below || err + sizeof(int) > tp) return false;
  const auto* words = reinterpret_cast<const std::uintptr_t*>(tp);
  if (words[0] != tp || words[2] != tp) return false;  // tcb and self: the block names itself
  if (__rseq_offset < 64 || __rseq_offset > 16384) return false;
  out.above = round_up(static_cast<std::uintptr_t>(__rseq_offset) + sizeof(struct rseq), 64);
  return true;
}

// What the keeper reads for its whole life, at the top of its mapping.
struct Block {
  KeeperArgs args;
  cpu_set_t cpus;
  cpu_set_t away;
  char uid_map[kMapText];
  char gid_map[kMapText];
  std::uintptr_t errno_at = 0;  // where the keeper's own errno is
};

bool copy_text(char (&to)[kMapText], const char* from) noexcept {
  if (from == nullptr) return true;
  std::size_t n = std::strlen(from);
  if (n >= kMapText) return false;
  std::memcpy(to, from, n + 1);
  return true;
}

// The keeper's first instructions, on its own stack and thread pointer.
int keeper_entry(void* block) {
  const auto* b = static_cast<const Block*>(block);
  if (reinterpret_cast<std::uintptr_t>(&errno) != b->errno_at) ::_exit(kKeeperFailed);
  keeper_main(b->args);
}

// The guard page, the stack, the thread data and the block, in one mapping; the thread data
// copied, the block filled in. Null when it cannot be.
Block* prepare(const KeeperArgs& args, const ThreadData& td, std::uintptr_t& stack_top,
               std::uintptr_t& tp) noexcept {
  const std::uintptr_t size =
      round_up(kPage + kStack + td.below + td.align + td.above + kTcbAlign + sizeof(Block), kPage);
  void* map = ::mmap(nullptr, size, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
  if (map == MAP_FAILED) return nullptr;
  const auto base = reinterpret_cast<std::uintptr_t>(map);
  if (::mprotect(map, kPage, PROT_NONE) != 0) {
    ::munmap(map, size);
    return nullptr;
  }
  stack_top = base + kPage + kStack;
  tp = round_up(stack_top + td.below, td.align);
  const std::uintptr_t from = thread_pointer();
  std::memcpy(reinterpret_cast<void*>(tp - td.below),
              reinterpret_cast<const void*>(from - td.below), td.below + td.above);
  auto* words = reinterpret_cast<std::uintptr_t*>(tp);
  words[0] = words[2] = tp;
  // Its cpu_id "unregistered": sched_getcpu() then asks the kernel, which keeps no rseq area
  // for a process cloned with CLONE_VM.
  auto* rseq = reinterpret_cast<struct rseq*>(tp + static_cast<std::uintptr_t>(__rseq_offset));
  rseq->cpu_id = static_cast<std::uint32_t>(-1);
  auto* b = new (reinterpret_cast<void*>(round_up(tp + td.above, kTcbAlign))) Block{};
  b->args = args;
  b->errno_at = reinterpret_cast<std::uintptr_t>(&errno) - from + tp;
  if (!copy_text(b->uid_map, args.uid_map) || !copy_text(b->gid_map, args.gid_map)) {
    ::munmap(map, size);
    return nullptr;
  }
  if (args.uid_map != nullptr) b->args.uid_map = b->uid_map;
  if (args.gid_map != nullptr) b->args.gid_map = b->gid_map;
  if (args.cpus != nullptr) b->cpus = *args.cpus, b->args.cpus = &b->cpus;
  if (args.away != nullptr) b->away = *args.away, b->args.away = &b->away;
  return b;
}

std::atomic<bool> g_done{false};
std::atomic<bool> g_shared{false};

}  // namespace

bool keeper_shares_memory() noexcept { return g_shared.load(); }

pid_t clone_shared_keeper(const KeeperArgs& args, int* pidfd) noexcept {
  ThreadData td;
  if (g_done.exchange(true) || !read_thread_data(td)) return 0;
  std::uintptr_t stack_top = 0, tp = 0;
  Block* b = prepare(args, td, stack_top, tp);
  if (b == nullptr) return 0;
  g_shared.store(true);  // before the keeper can run: nothing may make this memory dumpable
  constexpr int kFlags =
      CLONE_VM | CLONE_NEWUSER | CLONE_NEWPID | CLONE_PIDFD | CLONE_SETTLS | SIGCHLD;
  int pid = ::clone(keeper_entry, reinterpret_cast<void*>(stack_top), kFlags, b, pidfd,
                    reinterpret_cast<void*>(tp), nullptr);
  // The mapping stays: the keeper may outlive this call by the whole run. A kernel that will not
  // share memory with a new user namespace's first process gets a forked keeper.
  if (pid < 0) {
    int err = errno;
    g_shared.store(false);
    return err == EINVAL ? 0 : -err;
  }
  return pid;
}

#else

pid_t clone_shared_keeper(const KeeperArgs&, int*) noexcept { return 0; }

bool keeper_shares_memory() noexcept { return false; }

#endif

void restore_dumpable(int saved) noexcept {
  if (saved >= 0 && !keeper_shares_memory()) ::prctl(PR_SET_DUMPABLE, saved, 0, 0, 0);
}

}  // namespace cordon::landlock
