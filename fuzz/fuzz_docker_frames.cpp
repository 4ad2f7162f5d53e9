// libFuzzer target: arbitrary bytes as an attached container's multiplexed stream, fed to the
// docker backend's frame decoder in pieces whose sizes come from the input. The decoder must
// never hand out more payload than it was given, and must agree with a one-piece decode.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "frames.hpp"

using cordon::docker::FrameDecoder;
using cordon::docker::FrameStream;

namespace {

struct Result {
  std::string streams[4];
  bool ok = true;
};

Result decode(std::string_view bytes, std::size_t piece) {
  Result r;
  FrameDecoder d(
      [&r](FrameStream s, std::string_view data) { r.streams[static_cast<int>(s)].append(data); });
  for (std::size_t i = 0; i < bytes.size() && r.ok; i += piece)
    r.ok = d.feed(bytes.substr(i, piece));
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::size_t piece = 1 + data[0] % 17;
  std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  Result whole = decode(bytes, bytes.size() + 1);
  Result pieces = decode(bytes, piece);
  std::size_t total = 0;
  for (int i = 0; i < 4; ++i) {
    total += whole.streams[i].size();
    if (whole.streams[i] != pieces.streams[i]) __builtin_trap();
  }
  if (total > bytes.size() || whole.ok != pieces.ok) __builtin_trap();
  return 0;
}
