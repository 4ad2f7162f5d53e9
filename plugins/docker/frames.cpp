// The frame decoder. Pure: no I/O.
#include "frames.hpp"

namespace cordon::docker {

bool FrameDecoder::take_header() {
  if (header_[0] > 3 || header_[1] != 0 || header_[2] != 0 || header_[3] != 0) {
    error_ = "malformed stream frame header (type " + std::to_string(header_[0]) + ")";
    return false;
  }
  current_ = static_cast<FrameStream>(header_[0]);
  remaining_ = (std::uint32_t{header_[4]} << 24) | (std::uint32_t{header_[5]} << 16) |
               (std::uint32_t{header_[6]} << 8) | std::uint32_t{header_[7]};
  header_fill_ = 0;
  return true;
}

bool FrameDecoder::feed(std::string_view bytes) {
  if (!error_.empty()) return false;
  while (!bytes.empty()) {
    if (remaining_ == 0) {
      std::size_t take = std::min(bytes.size(), sizeof header_ - header_fill_);
      for (std::size_t i = 0; i < take; ++i) header_[header_fill_ + i] = bytes[i];
      header_fill_ += take;
      bytes.remove_prefix(take);
      if (header_fill_ == sizeof header_ && !take_header()) return false;
      continue;
    }
    std::size_t take = std::min<std::size_t>(bytes.size(), remaining_);
    handler_(current_, bytes.substr(0, take));
    remaining_ -= static_cast<std::uint32_t>(take);
    bytes.remove_prefix(take);
  }
  return true;
}

std::string frame_header(FrameStream stream, std::uint32_t size) {
  std::string h(8, '\0');
  h[0] = static_cast<char>(stream);
  for (int i = 0; i < 4; ++i) h[4 + i] = static_cast<char>((size >> (24 - 8 * i)) & 0xff);
  return h;
}

}  // namespace cordon::docker
