// The sandbox's children's raw writes (child_io.hpp): async-signal-safe, no allocation.
#include "child_io.hpp"

#include <fcntl.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "child_util.hpp"

namespace cordon::landlock {

ChildReport make_report(ChildReport::Kind kind, int err, const char* mechanism, const char* what,
                        const char* path) noexcept {
  ChildReport r;
  r.kind = kind;
  r.err = err;
  child::copy(r.mechanism, sizeof r.mechanism, mechanism);
  child::copy(r.detail, sizeof r.detail, what);
  if (path && *path) {
    child::append(r.detail, sizeof r.detail, " '");
    child::append(r.detail, sizeof r.detail, path);
    child::append(r.detail, sizeof r.detail, "'");
  }
  return r;
}

void send_report(int fd, const ChildReport& report) noexcept {
  ssize_t n;
  do n = ::write(fd, &report, sizeof report);
  while (n < 0 && errno == EINTR);
}

namespace {

int write_file(const char* path, const char* text) noexcept {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  ssize_t len = static_cast<ssize_t>(std::strlen(text));
  ssize_t n = ::write(fd, text, static_cast<size_t>(len));
  int err = n == len ? 0 : (n < 0 ? -errno : -EIO);
  ::close(fd);
  return err;
}

}  // namespace

int write_id_maps(pid_t pid, const char* uid_map, const char* gid_map, bool deny_setgroups,
                  const char** failed) noexcept {
  char base[32];
  char path[64];
  if (pid == 0) {
    child::copy(base, sizeof base, "/proc/self/");
  } else {
    char digits[16];
    child::copy(base, sizeof base, "/proc/");
    child::append(base, sizeof base, child::format_uint(digits, sizeof digits, pid));
    child::append(base, sizeof base, "/");
  }
  struct Step {
    const char* file;
    const char* text;
  };
  const Step steps[] = {
      {"setgroups", deny_setgroups ? "deny" : nullptr}, {"gid_map", gid_map}, {"uid_map", uid_map}};
  for (const auto& step : steps) {
    if (step.text == nullptr) continue;
    child::copy(path, sizeof path, base);
    child::append(path, sizeof path, step.file);
    if (int err = write_file(path, step.text); err != 0) {
      if (failed) *failed = step.file;
      return err;
    }
  }
  return 0;
}

int bring_up_loopback() noexcept {
  int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return -errno;
  ifreq ifr{};
  std::memcpy(ifr.ifr_name, "lo", 3);
  int rc = ::ioctl(s, SIOCGIFFLAGS, &ifr);
  if (rc == 0) {
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP | IFF_RUNNING);
    rc = ::ioctl(s, SIOCSIFFLAGS, &ifr);
  }
  int err = errno;
  ::close(s);
  return rc == 0 ? 0 : -err;
}

}  // namespace cordon::landlock
