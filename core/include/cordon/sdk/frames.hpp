// Framed output: how a cordon run reports to the cordon that started it from afar (over an ssh
// channel, or any other single byte stream). The stream carries the command's stdout, its
// stderr and, last, the run's result, each inside a frame that cordon wrote: nothing the command
// prints can pose as cordon's result or end the run early. Pure.
//
// A frame is a tag byte ('o' stdout, 'e' stderr, 'r' the result: the --json object of
// `cordon run`), the payload's length as 4 bytes big-endian, then the payload.
// `cordon run --framed` writes this stream on its stdout.
#pragma once

#include <cordon/sdk/export.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::sdk {

/// What a frame carries.
enum class FrameTag : char { out = 'o', err = 'e', result = 'r' };

/// The largest payload of one frame; encode_frames() splits longer output.
inline constexpr std::size_t kMaxFramePayload = 1u << 20;

/// `payload` as frames of `tag` (several when it is longer than kMaxFramePayload; none when it
/// is empty).
CORDON_API std::string encode_frames(FrameTag tag, std::string_view payload);

/// One decoded frame.
struct Frame {
  FrameTag tag;
  std::string payload;
};

/// Decodes a framed stream that arrives in chunks of any size.
class CORDON_API FrameReader {
 public:
  /// The frames completed by `bytes`. Throws cordon::Error CRD5003 for an unknown tag, a length
  /// over kMaxFramePayload, or anything after the result frame.
  std::vector<Frame> feed(std::string_view bytes);
  /// True when no partial frame is held (the stream may end here).
  bool at_boundary() const noexcept { return held_.empty(); }
  /// True once the result frame was read.
  bool finished() const noexcept { return finished_; }

 private:
  std::string held_;
  bool finished_ = false;
};

}  // namespace cordon::sdk
