// SHA-256 (OpenSSL's EVP) and the verified copies of cordon's own programs.
#include "verified_file.hpp"

#include <cordon/sdk/error.hpp>

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "waiter_blob.hpp"

namespace cordon::docker {

namespace {

using Context = std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)>;

std::string hex(const unsigned char* digest, unsigned int size) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < size; ++i) {
    out += digits[digest[i] >> 4];
    out += digits[digest[i] & 0xf];
  }
  return out;
}

std::optional<std::string> finish(EVP_MD_CTX* ctx) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_DigestFinal_ex(ctx, digest, &size) != 1) return std::nullopt;
  return hex(digest, size);
}

// The file held by `fd` is the one cordon wants: regular, cordon's, one link, no write bit for
// anyone, and `digest`'s bytes.
bool is_copy(int fd, const std::string& digest, int mode) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() ||
      st.st_nlink != 1 || (st.st_mode & 07777) != static_cast<mode_t>(mode))
    return false;
  auto actual = sha256_of_fd(fd);
  return actual && *actual == digest;
}

}  // namespace

std::string sha256_hex(std::string_view bytes) {
  Context ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1 ||
      EVP_DigestUpdate(ctx.get(), bytes.data(), bytes.size()) != 1)
    throw Error(code::kBackendFault, "sha-256 is not available");
  auto out = finish(ctx.get());
  if (!out) throw Error(code::kBackendFault, "sha-256 is not available");
  return *out;
}

std::optional<std::string> sha256_of_fd(int fd) {
  Context ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) return std::nullopt;
  char buf[65536];
  for (off_t at = 0;;) {
    ssize_t n = ::pread(fd, buf, sizeof buf, at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) break;
    if (EVP_DigestUpdate(ctx.get(), buf, static_cast<std::size_t>(n)) != 1) return std::nullopt;
    at += n;
  }
  return finish(ctx.get());
}

SourceIdentity verified_copy(const PrivateDir& dir, const std::string& name, std::string_view bytes,
                             int mode) {
  std::string digest = sha256_hex(bytes);
  for (int attempt = 0; attempt < 2; ++attempt) {
    OwnedFd fd = dir.open_file(name, O_RDONLY);
    // The descriptor that was hashed is the one held: the bind of the path is checked against it.
    if (fd && is_copy(fd.get(), digest, mode))
      return identity_of_fd(fd.release(), dir.path() / name);
    fd.reset();
    dir.write_file(name, bytes, static_cast<mode_t>(mode));
  }
  throw Error(code::kIsolationFailed, "cordon's copy of '" + name + "' in '" + dir.path().string() +
                                          "' keeps differing from the one built into cordon");
}

SourceIdentity ensure_waiter(const PrivateDir& dir) {
  // The embedded bytes do not change while the process lives: their digest names the copy.
  static const std::string name = "docker-waiter-" + sha256_hex(waiter_program()).substr(0, 16);
  return verified_copy(dir, name, waiter_program(), 0555);
}

}  // namespace cordon::docker
