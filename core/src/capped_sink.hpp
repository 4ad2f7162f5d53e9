// Head-and-tail output capping between a backend and the caller's sink (internal).
#pragma once

#include <cordon/sdk/backend.hpp>

#include <cstdint>
#include <string>

namespace cordon::detail {

/// Passes the first half of the cap through at once, keeps the newest half in a ring, and on
/// finish() writes a marker naming the omitted byte count followed by that tail. Memory is
/// bounded by the cap whatever the command writes.
class CORDON_API CappedSink final : public OutputSink {
 public:
  CappedSink(OutputSink& downstream, std::uint64_t cap_per_stream);
  void write(Stream stream, std::string_view chunk) override;
  /// Flushes the kept tails; call once after the run.
  void finish();

  std::uint64_t total(Stream s) const { return state(s).total; }
  bool truncated(Stream s) const { return state(s).total > cap_; }

 private:
  struct StreamState {
    std::uint64_t total = 0;
    std::uint64_t head_sent = 0;
    std::string ring;          // tail bytes, circular once full
    std::size_t ring_pos = 0;  // next write position once the ring is full
  };
  StreamState& state(Stream s) { return s == Stream::out ? out_ : err_; }
  const StreamState& state(Stream s) const { return s == Stream::out ? out_ : err_; }
  void keep_tail(StreamState& st, std::string_view bytes);
  void flush(Stream s);

  OutputSink& downstream_;
  std::uint64_t cap_;
  std::uint64_t head_cap_;
  std::uint64_t tail_cap_;
  StreamState out_;
  StreamState err_;
};

}  // namespace cordon::detail
