// Helpers that are safe in a child of a multi-threaded process: no allocation, no locks, no
// glibc bookkeeping of threads.
#pragma once

#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

namespace cordon::landlock::child {

// Identity changes in a child made by clone()/clone3() of a multi-threaded process. glibc's
// setgroups/setresuid/setresgid apply the change to every thread it believes exists: the
// parent's list is copied into the child, and a thread that was being created at the moment of
// the clone makes them wait forever. The raw system calls change this one thread, which in the
// child is the whole process. Each returns 0 or -1 with errno set.

/// setgroups(0, NULL) for the calling thread only.
inline int drop_supplementary_groups() noexcept {
  return static_cast<int>(::syscall(SYS_setgroups, 0, nullptr));
}

/// setresgid(gid, gid, gid) for the calling thread only.
inline int set_all_gids(gid_t gid) noexcept {
  return static_cast<int>(::syscall(SYS_setresgid, gid, gid, gid));
}

/// setresuid(uid, uid, uid) for the calling thread only.
inline int set_all_uids(uid_t uid) noexcept {
  return static_cast<int>(::syscall(SYS_setresuid, uid, uid, uid));
}

/// No signal blocked.
inline void unblock_signals() noexcept {
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

/// Copies `src` into `dst` (size `cap`), always terminated; truncates.
inline void copy(char* dst, std::size_t cap, const char* src) noexcept {
  if (cap == 0) return;
  std::size_t i = 0;
  for (; src != nullptr && src[i] != '\0' && i + 1 < cap; ++i) dst[i] = src[i];
  dst[i] = '\0';
}

/// Appends `src` to the terminated string in `dst`; truncates.
inline void append(char* dst, std::size_t cap, const char* src) noexcept {
  std::size_t len = 0;
  while (len < cap && dst[len] != '\0') ++len;
  if (len < cap) copy(dst + len, cap - len, src);
}

/// Decimal rendering of `value` into `buf`; returns `buf`.
inline const char* format_uint(char* buf, std::size_t cap, std::uint64_t value) noexcept {
  char tmp[24];
  std::size_t n = 0;
  do {
    tmp[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0 && n < sizeof tmp);
  std::size_t i = 0;
  for (; i < n && i + 1 < cap; ++i) buf[i] = tmp[n - 1 - i];
  if (cap) buf[i] = '\0';
  return buf;
}

}  // namespace cordon::landlock::child
