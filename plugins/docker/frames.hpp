// Demultiplexing of an attached container's output: the 8-byte frame header of the Engine API
// (stream type, three zero bytes, big-endian payload length). Pure.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace cordon::docker {

/// The stream a frame belongs to (byte 0 of its header).
enum class FrameStream : std::uint8_t { stdin_echo = 0, out = 1, err = 2, system_error = 3 };

/// Reassembles frames from bytes that arrive in arbitrary pieces and hands each payload to the
/// handler, in order. A payload that arrived in pieces reaches the handler in pieces: a handler
/// treats each call as a chunk of its stream.
class FrameDecoder {
 public:
  using Handler = std::function<void(FrameStream, std::string_view)>;

  explicit FrameDecoder(Handler handler) : handler_(std::move(handler)) {}

  /// Consumes `bytes`. Returns false (and consumes nothing more, ever) when a header is
  /// malformed: a stream type above 3 or a non-zero padding byte.
  bool feed(std::string_view bytes);

  /// True when the bytes so far end exactly on a frame boundary.
  bool at_boundary() const { return header_fill_ == 0 && remaining_ == 0; }

  /// Why feed() returned false, or empty.
  const std::string& error() const { return error_; }

 private:
  bool take_header();

  Handler handler_;
  unsigned char header_[8] = {};
  std::size_t header_fill_ = 0;
  std::uint32_t remaining_ = 0;
  FrameStream current_ = FrameStream::out;
  std::string error_;
};

/// The 8-byte header for a payload of `size` bytes on `stream` (for tests and the pool).
std::string frame_header(FrameStream stream, std::uint32_t size);

}  // namespace cordon::docker
