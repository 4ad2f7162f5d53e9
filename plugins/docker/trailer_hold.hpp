// The waiter's exit trailer is the last kTrailerSize bytes of stdout and stderr. Stripping it
// must not delay the command's output: only bytes that could still be the trailer's start — a
// suffix that is a prefix of the secret nonce (and, once it is whole, up to four status bytes) —
// are held. The nonce is random and never reaches the command, so output is held back only
// when it happens to end with the first bytes of the nonce, and then only until the next byte.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace cordon::docker {

/// One stream of an attached run: passes what cannot be the trailer on as it arrives. Pure.
class TrailerHold {
 public:
  /// `forward` receives the stream's bytes, the trailer excluded. With an empty `nonce` nothing is
  /// held (no waiter writes a trailer).
  TrailerHold(std::function<void(std::string_view)> forward, std::string nonce);

  /// Takes the next bytes of the stream.
  void write(std::string_view chunk);

  /// The trailer's status when the stream ends with the trailer now.
  std::optional<std::int64_t> status() const;

  /// At the stream's end: the trailer's status, or nullopt after passing the held bytes on.
  std::optional<std::int64_t> finish();

  /// How many bytes are held now (at most kTrailerSize).
  std::size_t held() const { return held_.size(); }

 private:
  std::size_t trailer_start(std::string_view bytes) const;

  std::function<void(std::string_view)> forward_;
  std::string nonce_;
  std::string held_;
};

}  // namespace cordon::docker
