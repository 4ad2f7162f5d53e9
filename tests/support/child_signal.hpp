// SIGCHLD's action set for a while: the tests of a host process that has SIGCHLD ignored or
// SA_NOCLDWAIT set (the kernel then reaps its children itself, and their status is lost).
#pragma once

#include <signal.h>

#include <cstring>

namespace cordon::testing {

/// A signal action with `handler` and `flags`, nothing blocked while it runs.
inline struct sigaction child_action(void (*handler)(int), int flags) {
  struct sigaction a;
  std::memset(&a, 0, sizeof a);
  a.sa_handler = handler;
  a.sa_flags = flags;
  sigemptyset(&a.sa_mask);
  return a;
}

/// Calls `body()` while SIGCHLD's action is `chld`; the old one is back afterwards.
template <class F>
auto with_child_action(const struct sigaction& chld, F body) {
  struct sigaction old;
  ::sigaction(SIGCHLD, &chld, &old);
  auto result = body();
  ::sigaction(SIGCHLD, &old, nullptr);
  return result;
}

}  // namespace cordon::testing
