// TrailerHold: the longest suffix that may begin the trailer stays; the rest goes on.
#include "trailer_hold.hpp"

#include <algorithm>

#include "waiter_blob.hpp"

namespace cordon::docker {

TrailerHold::TrailerHold(std::function<void(std::string_view)> forward, std::string nonce)
    : forward_(std::move(forward)), nonce_(std::move(nonce)) {}

// Where in `bytes` the longest suffix starts that could be the trailer's beginning: its first
// min(length, nonce) bytes are the nonce's first ones. bytes.size() when there is none.
std::size_t TrailerHold::trailer_start(std::string_view bytes) const {
  std::size_t longest = std::min(bytes.size(), kTrailerSize);
  for (std::size_t len = longest; len > 0; --len) {
    std::string_view suffix = bytes.substr(bytes.size() - len);
    std::size_t n = std::min(len, nonce_.size());
    if (suffix.substr(0, n) == std::string_view(nonce_).substr(0, n)) return bytes.size() - len;
  }
  return bytes.size();
}

void TrailerHold::write(std::string_view chunk) {
  if (nonce_.empty()) {
    forward_(chunk);
    return;
  }
  if (chunk.empty()) return;
  if (held_.empty()) {
    // The common case: nothing held, so only the chunk's own end needs looking at.
    std::size_t start = trailer_start(chunk);
    if (start > 0) forward_(chunk.substr(0, start));
    held_.assign(chunk.substr(start));
    return;
  }
  held_.append(chunk);
  std::size_t start = trailer_start(held_);
  if (start > 0) forward_(std::string_view(held_).substr(0, start));
  held_.erase(0, start);
}

std::optional<std::int64_t> TrailerHold::status() const {
  return nonce_.empty() ? std::nullopt : trailer_status(held_, nonce_);
}

std::optional<std::int64_t> TrailerHold::finish() {
  auto st = status();
  if (!st && !held_.empty()) forward_(held_);
  held_.clear();
  return st;
}

}  // namespace cordon::docker
