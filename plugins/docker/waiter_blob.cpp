// The embedded waiter (cordon/sdk/embed.hpp), and the header that tells it what to do.
#include "waiter_blob.hpp"

#include <cordon/sdk/embed.hpp>

#include <vector>

CORDON_EMBED_FILE(cordon_docker_waiter, CORDON_DOCKER_WAITER_FILE)

namespace cordon::docker {

std::string_view waiter_program() { return cordon_docker_waiter(); }

std::string waiter_header(const WaiterInput& in) {
  std::string out = in.nonce;
  auto put = [&out](std::uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((v >> shift) & 0xff);
  };
  auto put64 = [&put](std::uint64_t v) {
    put(static_cast<std::uint32_t>(v >> 32));
    put(static_cast<std::uint32_t>(v & 0xffffffffu));
  };
  put((in.stdin_follows ? 1u : 0u) | (in.uid ? 2u : 0u));
  put64(in.deadline_ms);
  if (in.uid) put(*in.uid);
  put(static_cast<std::uint32_t>(in.checks.size()));
  for (const auto& c : in.checks) {
    put(static_cast<std::uint32_t>(c.target.size()));
    out += c.target;
    put64(c.dev);
    put64(c.ino);
  }
  put(static_cast<std::uint32_t>(in.argv.size()));
  for (const auto& a : in.argv) {
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
