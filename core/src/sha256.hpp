// SHA-256 (FIPS 180-4), for pinning plugin files by digest (internal).
#pragma once

#include <cordon/sdk/export.hpp>

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace cordon::detail {

/// Incremental SHA-256: update() any number of times, then hex() once.
class CORDON_API Sha256 {
 public:
  Sha256();
  void update(const void* data, std::size_t size);
  void update(std::string_view bytes) { update(bytes.data(), bytes.size()); }
  /// The digest as 64 lowercase hex digits. Finishes the hash: call once.
  std::string hex();

 private:
  void block(const std::uint8_t* p);

  std::array<std::uint32_t, 8> h_;
  std::array<std::uint8_t, 64> buf_{};
  std::size_t buf_len_ = 0;
  std::uint64_t total_ = 0;
};

/// The digest of `bytes`.
CORDON_API std::string sha256_hex(std::string_view bytes);

/// The digest of what can be read from open file descriptor `fd` (from its current offset);
/// nullopt and `error` set on a read error.
CORDON_API std::optional<std::string> sha256_fd(int fd, std::string& error);

}  // namespace cordon::detail
