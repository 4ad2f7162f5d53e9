// sdk::default_signals(): a child's signal dispositions back to the defaults before execve.
//
// An ignored signal survives execve, and a caught one would run cordon's handler in a child
// that may share cordon's memory. Resetting each of the 64 signals costs 64 system calls, and a
// system call is dear where the kernel runs under a hypervisor; the kernel lists the signals
// whose action is not the default in /proc/self/status (SigIgn, SigCgt), so one read names the
// few that need a reset. When that file cannot be read or parsed, every signal is reset.
#include <cordon/sdk/child.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace cordon::sdk {

namespace {

constexpr std::uint64_t kEverySignal = ~std::uint64_t{0};

// The mask of a "SigIgn:\t<16 hex digits>" line after its name; `ok` false unless 16 digits.
std::uint64_t hex_mask(const char* text, int length, bool& ok) noexcept {
  std::uint64_t mask = 0;
  int digits = 0;
  for (int i = 0; i < length; ++i) {
    char c = text[i];
    int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (v < 0) {
      if (digits > 0) break;
      continue;  // the tab before the digits
    }
    if (++digits > 16) break;
    mask = mask << 4 | static_cast<std::uint64_t>(v);
  }
  ok = digits == 16;
  return mask;
}

bool starts_with(const char* line, int length, const char* prefix) noexcept {
  int i = 0;
  for (; prefix[i] != '\0'; ++i)
    if (i >= length || line[i] != prefix[i]) return false;
  return true;
}

// Signals ignored or caught here (bit sig-1), from /proc/self/status read in chunks (its
// Groups line has no bound); every signal when either line is missing.
std::uint64_t non_default_signals() noexcept {
  int fd = ::open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return kEverySignal;
  char chunk[1024];
  char line[48];  // the head of the current line: enough for "SigCgt:\t" and 16 digits
  int kept = 0;
  int found = 0;
  std::uint64_t mask = 0;
  bool broken = false;
  for (;;) {
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; ++i) {
      if (chunk[i] != '\n') {
        if (kept < static_cast<int>(sizeof line)) line[kept++] = chunk[i];
        continue;
      }
      if (starts_with(line, kept, "SigIgn:") || starts_with(line, kept, "SigCgt:")) {
        bool ok = false;
        mask |= hex_mask(line + 7, kept - 7, ok);
        broken = broken || !ok;
        ++found;
      }
      kept = 0;
    }
  }
  ::close(fd);
  return found == 2 && !broken ? mask : kEverySignal;
}

}  // namespace

void default_signals() noexcept {
  const std::uint64_t reset = non_default_signals();
  // The raw call: glibc's sigaction refuses 32 and 33 (its own), which may be inherited
  // ignored. SIG_DFL is 0, so a zeroed kernel sigaction on any layout; SIGKILL and SIGSTOP
  // fail harmlessly.
  const unsigned long dfl[4] = {};
  for (int sig = 1; sig < NSIG && sig <= 64; ++sig)
    if (reset & std::uint64_t{1} << (sig - 1)) ::syscall(SYS_rt_sigaction, sig, dfl, nullptr, 8);
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

}  // namespace cordon::sdk
