// A file held open for writing by another process: what makes execve() of it fail with
// ETXTBSY, for the tests of how cordon waits that out (sdk::execve_patiently).
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace cordon::testing {

/// A child process that opens `path` for writing, holds it for `ms` milliseconds and exits.
/// Returns once the file is open; -1 when the child could not open it (or not be made).
inline pid_t hold_for_writing(const std::string& path, int ms) {
  int ready[2];
  if (::pipe(ready) != 0) return -1;
  pid_t pid = ::fork();
  if (pid == 0) {
    char byte = ::open(path.c_str(), O_WRONLY) >= 0 ? 1 : 0;
    (void)!::write(ready[1], &byte, 1);
    ::usleep(static_cast<useconds_t>(ms) * 1000);
    ::_exit(0);
  }
  ::close(ready[1]);
  char byte = 0;
  bool open = pid > 0 && ::read(ready[0], &byte, 1) == 1 && byte == 1;
  ::close(ready[0]);
  if (pid > 0 && !open) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  return open ? pid : -1;
}

/// Ends and reaps a holder of hold_for_writing() now.
inline void let_go(pid_t holder) {
  if (holder <= 0) return;
  ::kill(holder, SIGKILL);
  ::waitpid(holder, nullptr, 0);
}

}  // namespace cordon::testing
