// sdk::execve_patiently(): an execve that waits out a program still open for writing.
//
// A program file that some process holds open for writing cannot be executed (ETXTBSY). The
// holder is often not the writer: a process forked or cloned while the writer's descriptor was
// open has a copy of it until it closes its descriptors or executes. A host that writes a
// script and runs it at once (an agent's write_file, then execute_command) meets such copies
// made by its own other threads, which start sandboxes meanwhile. Those copies live for
// milliseconds; a file really being written stays busy past the patience and fails as before.
#include <cordon/sdk/child.hpp>

#include <time.h>
#include <unistd.h>

#include <cerrno>

namespace cordon::sdk {

namespace {

constexpr long kFirstWaitNs = 1'000'000;     // 1 ms, doubled after each try
constexpr long kLongestWaitNs = 64'000'000;  // 64 ms
constexpr long kPatienceNs = 2'000'000'000;  // 2 s in all

void pause_for(long ns) noexcept {
  timespec t{ns / 1'000'000'000, ns % 1'000'000'000};
  while (::nanosleep(&t, &t) != 0 && errno == EINTR) {
  }
}

}  // namespace

int execve_patiently(const char* path, char* const argv[], char* const envp[]) noexcept {
  long waited = 0;
  long wait = kFirstWaitNs;
  for (;;) {
    ::execve(path, argv, envp);
    int err = errno;
    if (err != ETXTBSY || waited >= kPatienceNs) return err;
    pause_for(wait);
    waited += wait;
    wait = wait * 2 > kLongestWaitNs ? kLongestWaitNs : wait * 2;
  }
}

}  // namespace cordon::sdk
