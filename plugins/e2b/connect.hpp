// The Connect protocol as envd speaks it, over HTTP/1.1: a server-streaming call's body is a
// sequence of envelopes (a flag byte, a 4-byte big-endian length, a JSON payload); flag 0x02
// marks the last, which carries the call's error, if any. Events of process.Process/Start
// follow proto3's JSON mapping: bytes are base64, and a zero value is left out (an end event
// without exitCode exited with 0). Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::e2b {

/// One envelope of the body.
struct Envelope {
  std::uint8_t flags = 0;
  std::string payload;
};

inline constexpr std::uint8_t kEndStream = 0x02;
inline constexpr std::uint8_t kCompressed = 0x01;
/// Larger envelopes are refused as a broken stream (envd's data chunks are 32 KiB).
inline constexpr std::size_t kMaxEnvelope = 16u << 20;

/// `payload` as one envelope with flags 0 (a request).
std::string envelope(std::string_view payload);

/// Splits a body that arrives in pieces. Throws std::runtime_error on a malformed stream.
class EnvelopeReader {
 public:
  /// Adds bytes and returns the envelopes they complete.
  std::vector<Envelope> feed(std::string_view bytes);
  /// True when bytes of an unfinished envelope are held.
  bool partial() const { return !buffer_.empty(); }

 private:
  std::string buffer_;
};

/// One event of process.Process/Start or Connect.
struct Event {
  enum class Kind { start, out, err, keepalive, end, other } kind = Kind::other;
  long pid = 0;      ///< start
  std::string data;  ///< out, err: decoded bytes
  // end:
  int exit_code = 0;
  bool exited = false;
  std::string status;  ///< "exit status 3", "signal: killed"
  std::string error;
};

/// Decodes a message envelope's payload ({"event":{…}}). Throws std::runtime_error when it is
/// not JSON or its base64 is broken.
Event parse_event(std::string_view payload);

/// The error of an end-of-stream envelope ("code: message"), or nullopt when the call ended
/// well ({} or no error member). Throws std::runtime_error when it is not JSON.
std::optional<std::string> end_stream_error(std::string_view payload);

/// The signal number in a Go ProcessState string ("signal: killed" -> 9, "signal: 37" -> 37),
/// or 0 when it names none.
int signal_of_status(std::string_view status);

}  // namespace cordon::e2b
