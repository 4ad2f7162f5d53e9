// Framed output: how a cordon run reports to the cordon that started it from afar (over an ssh
// channel, or any other single byte stream). The stream carries the command's stdout, its
// stderr and, last, the run's result, each inside a frame that cordon wrote: nothing the command
// prints can pose as cordon's result or end the run early. Pure.
//
// A frame is a tag byte ('o' stdout, 'e' stderr, 'r' the result: the --json object of
// `cordon run`), the payload's length as 4 bytes big-endian, then the payload.
// `cordon run --framed` writes this stream on its stdout. `cordon serve --framed` reads 'q'
// frames (a JSON request, as `cordon run --request` takes) and 's' frames ("terminate" or
// "kill": the run in progress) on its stdin, and answers each request with an 'a' frame (taken:
// a server that dies before it ran nothing of the request), output frames and one result
// frame, for as long as its stdin is open.
#pragma once

#include <cordon/sdk/export.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::sdk {

/// What a frame carries.
enum class FrameTag : char {
  out = 'o',
  err = 'e',
  result = 'r',
  request = 'q',   ///< to `cordon serve`: a run's JSON request
  stop = 's',      ///< to `cordon serve`: "terminate" or "kill" the run in progress
  accepted = 'a',  ///< from `cordon serve`: the request was read and its run begins (empty)
};

/// The largest payload of one frame; encode_frames() splits longer output.
inline constexpr std::size_t kMaxFramePayload = 1u << 20;

/// The largest payload of a request frame, which is never split: a request's largest size
/// (kMaxRequestBytes of <cordon/request.hpp>, 16 MiB).
inline constexpr std::size_t kMaxRequestFramePayload = 16u << 20;

/// The largest payload a frame of `tag` may carry.
constexpr std::size_t max_payload(FrameTag tag) noexcept {
  return tag == FrameTag::request ? kMaxRequestFramePayload : kMaxFramePayload;
}

/// One frame of `tag` holding `payload` (empty allowed). Throws cordon::Error CRD4006 when
/// `payload` is longer than max_payload(tag).
CORDON_API std::string encode_frame(FrameTag tag, std::string_view payload);

/// `payload` as frames of `tag` (several when it is longer than kMaxFramePayload; none when it
/// is empty). Not for requests: send one with encode_frame().
CORDON_API std::string encode_frames(FrameTag tag, std::string_view payload);

/// One decoded frame.
struct Frame {
  FrameTag tag;
  std::string payload;
};

/// Decodes a framed stream that arrives in chunks of any size.
class CORDON_API FrameReader {
 public:
  /// `serving`: a stream of many runs (`cordon serve`), where a result frame ends a run, not the
  /// stream.
  explicit FrameReader(bool serving = false) : serving_(serving) {}
  /// The frames completed by `bytes`. Throws cordon::Error CRD5003 for an unknown tag, a length
  /// over max_payload() of its tag, or anything after the result frame (unless serving).
  std::vector<Frame> feed(std::string_view bytes);
  /// True when no partial frame is held (the stream may end here).
  bool at_boundary() const noexcept { return held_.empty(); }
  /// True once the result frame was read (never when serving).
  bool finished() const noexcept { return finished_; }

 private:
  std::string held_;
  bool serving_ = false;
  bool finished_ = false;
};

}  // namespace cordon::sdk
