// The embedded waiter: its bytes come in with the assembler's .incbin at build time.
#include "waiter_blob.hpp"

#include <cordon/error.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <vector>

asm(".section .rodata\n"
    ".balign 16\n"
    "cordon_docker_waiter_begin:\n"
    ".incbin \"" CORDON_DOCKER_WAITER_FILE
    "\"\n"
    "cordon_docker_waiter_end:\n"
    ".previous\n");
extern "C" const char cordon_docker_waiter_begin[];
extern "C" const char cordon_docker_waiter_end[];

namespace cordon::docker {

std::string_view waiter_program() {
  return {cordon_docker_waiter_begin,
          static_cast<std::size_t>(cordon_docker_waiter_end - cordon_docker_waiter_begin)};
}

std::string ensure_waiter(const std::filesystem::path& dir) {
  auto bytes = waiter_program();
  // The program is embedded: its hash (of ~700 KB) is the same for the life of the process.
  static const std::string tag = [bytes] {
    char hex[24];
    std::snprintf(hex, sizeof hex, "%zx", std::hash<std::string_view>{}(bytes));
    return std::string(hex);
  }();
  std::string path = (dir / ("docker-waiter-" + tag)).string();
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
      static_cast<std::size_t>(st.st_size) == bytes.size())
    return path;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::string tmp = path + ".tmp" + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0555);
  bool ok =
      fd >= 0 && ::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size());
  if (fd >= 0) ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw Error(code::kIsolationFailed,
                "cannot write cordon's waiter to '" + path + "': " + std::strerror(err));
  }
  return path;
}

std::string waiter_header(const std::string& nonce, bool stdin_follows,
                          const std::vector<WaiterCheck>& checks,
                          const std::vector<std::string>& argv) {
  std::string out = nonce;
  auto put = [&out](std::uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((v >> shift) & 0xff);
  };
  auto put64 = [&put](std::uint64_t v) {
    put(static_cast<std::uint32_t>(v >> 32));
    put(static_cast<std::uint32_t>(v & 0xffffffffu));
  };
  put(stdin_follows ? 1u : 0u);
  put(static_cast<std::uint32_t>(checks.size()));
  for (const auto& c : checks) {
    put(static_cast<std::uint32_t>(c.target.size()));
    out += c.target;
    put64(c.dev);
    put64(c.ino);
  }
  put(static_cast<std::uint32_t>(argv.size()));
  for (const auto& a : argv) {
    put(static_cast<std::uint32_t>(a.size()));
    out += a;
  }
  return out;
}

std::optional<std::int64_t> trailer_status(std::string_view tail, const std::string& nonce) {
  if (tail.size() != kTrailerSize || nonce.size() != kNonceSize ||
      tail.substr(0, kNonceSize) != nonce)
    return std::nullopt;
  std::uint32_t v = 0;
  for (std::size_t i = kNonceSize; i < kTrailerSize; ++i)
    v = (v << 8) | static_cast<unsigned char>(tail[i]);
  return static_cast<std::int64_t>(v);
}

}  // namespace cordon::docker
