// Head-and-tail output capping.
#include "capped_sink.hpp"

namespace cordon::detail {

CappedSink::CappedSink(OutputSink& downstream, std::uint64_t cap_per_stream)
    : downstream_(downstream),
      cap_(cap_per_stream),
      head_cap_(cap_per_stream - cap_per_stream / 2),
      tail_cap_(cap_per_stream / 2) {}

void CappedSink::write(Stream stream, std::string_view chunk) {
  auto& st = state(stream);
  st.total += chunk.size();
  if (st.head_sent < head_cap_) {
    auto n = std::min<std::uint64_t>(chunk.size(), head_cap_ - st.head_sent);
    downstream_.write(stream, chunk.substr(0, n));
    st.head_sent += n;
    chunk.remove_prefix(n);
  }
  if (!chunk.empty()) keep_tail(st, chunk);
}

void CappedSink::keep_tail(StreamState& st, std::string_view bytes) {
  if (tail_cap_ == 0) return;
  if (bytes.size() >= tail_cap_) {  // the newest tail_cap_ bytes replace everything
    st.ring.assign(bytes.substr(bytes.size() - tail_cap_));
    st.ring_pos = 0;
    return;
  }
  while (!bytes.empty() && st.ring.size() < tail_cap_) {
    auto n = std::min<std::size_t>(bytes.size(), tail_cap_ - st.ring.size());
    st.ring.append(bytes.substr(0, n));
    bytes.remove_prefix(n);
  }
  while (!bytes.empty()) {  // full: overwrite the oldest bytes
    auto n = std::min<std::size_t>(bytes.size(), tail_cap_ - st.ring_pos);
    st.ring.replace(st.ring_pos, n, bytes.substr(0, n));
    st.ring_pos = (st.ring_pos + n) % tail_cap_;
    bytes.remove_prefix(n);
  }
}

void CappedSink::flush(Stream s) {
  auto& st = state(s);
  if (st.ring.empty()) return;
  std::uint64_t omitted = st.total - st.head_sent - st.ring.size();
  if (omitted > 0) {
    downstream_.write(
        s, "\n[cordon: " + std::to_string(omitted) + " bytes omitted; head and tail kept]\n");
  }
  std::string_view ring(st.ring);
  downstream_.write(s, ring.substr(st.ring_pos));
  downstream_.write(s, ring.substr(0, st.ring_pos));
  st.ring.clear();
  st.ring_pos = 0;
}

void CappedSink::finish() {
  flush(Stream::out);
  flush(Stream::err);
}

}  // namespace cordon::detail
