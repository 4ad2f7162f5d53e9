// The stop request's wake-up: a non-blocking pipe written once per raise, so that a backend's
// poll() wakes for it instead of looking at the level on a timer.
#include <cordon/sdk/stop_token.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace cordon {

StopToken::StopToken() noexcept {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return;
  wake_read_ = fds[0];
  wake_write_ = fds[1];
}

StopToken::~StopToken() {
  if (wake_read_ >= 0) ::close(wake_read_);
  if (wake_write_ >= 0) ::close(wake_write_);
}

void StopToken::request(Level level) noexcept {
  int want = static_cast<int>(level);
  int cur = level_.load();
  while (cur < want) {
    if (level_.compare_exchange_weak(cur, want)) {
      // A full pipe is already readable: nothing is lost when this write fails. errno is kept
      // for the signal handler that may have called this.
      int saved = errno;
      char byte = 1;
      if (wake_write_ >= 0 && ::write(wake_write_, &byte, 1) < 0) {
      }
      errno = saved;
      return;
    }
  }
}

void StopToken::drain_wake() noexcept {
  if (wake_read_ < 0) return;
  char buf[64];
  while (::read(wake_read_, buf, sizeof buf) > 0) {
  }
}

}  // namespace cordon
