// libFuzzer target: arbitrary bytes as envd's Connect stream (fed to the envelope reader in
// pieces whose size comes from the input, each envelope decoded as an event or an end-of-stream
// payload) and as a tar archive coming back from a sandbox. Malformed input may only ever be an
// exception of the documented kind, and split decoding must agree with one-piece decoding.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <cordon/sdk/tar.hpp>
#include "connect.hpp"

namespace {

std::vector<cordon::e2b::Envelope> split(std::string_view bytes, std::size_t piece, bool& ok) {
  cordon::e2b::EnvelopeReader reader;
  std::vector<cordon::e2b::Envelope> out;
  try {
    for (std::size_t i = 0; i < bytes.size(); i += piece)
      for (auto& e : reader.feed(bytes.substr(i, piece))) out.push_back(std::move(e));
  } catch (const std::runtime_error&) {
    ok = false;
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::size_t piece = 1 + data[0] % 64;
  std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  bool ok_split = true, ok_whole = true;
  auto pieces = split(bytes, piece, ok_split);
  auto whole = split(bytes, bytes.size() + 1, ok_whole);
  if (ok_split && ok_whole && pieces.size() != whole.size()) __builtin_trap();
  for (const auto& e : whole) {
    try {
      if (e.flags & cordon::e2b::kEndStream)
        (void)cordon::e2b::end_stream_error(e.payload);
      else
        (void)cordon::e2b::parse_event(e.payload);
    } catch (const std::runtime_error&) {
    }
  }
  (void)cordon::e2b::signal_of_status(bytes);
  try {
    for (const auto& f : cordon::sdk::read_tar(bytes))
      if (f.content.size() > bytes.size()) __builtin_trap();
  } catch (const std::exception&) {
  }
  return 0;
}
