// The framed stream of `cordon run --framed` (cordon/sdk/frames.hpp).
#include <cordon/sdk/error.hpp>
#include <cordon/sdk/frames.hpp>

#include <algorithm>
#include <cstdint>

namespace cordon::sdk {

namespace {

constexpr std::size_t kHeader = 5;

bool known(char tag) {
  for (auto t : {FrameTag::out, FrameTag::err, FrameTag::result, FrameTag::request, FrameTag::stop,
                 FrameTag::accepted})
    if (tag == static_cast<char>(t)) return true;
  return false;
}

Error malformed(const std::string& what) {
  return Error(code::kBackendFault, "a framed stream of cordon's is malformed: " + what,
               "both ends must be the same version of cordon");
}

}  // namespace

std::string encode_frame(FrameTag tag, std::string_view payload) {
  if (payload.size() > max_payload(tag))
    throw Error(code::kBadRequest,
                "a request of " + std::to_string(payload.size()) + " bytes is over the " +
                    std::to_string(max_payload(tag) >> 20) + " MiB a request may be",
                "give the command less stdin, or write it to the workspace first");
  auto len = static_cast<std::uint32_t>(payload.size());
  std::string out(1, static_cast<char>(tag));
  for (int shift : {24, 16, 8, 0}) out += static_cast<char>((len >> shift) & 0xff);
  out.append(payload.substr(0, len));
  return out;
}

std::string encode_frames(FrameTag tag, std::string_view payload) {
  std::string out;
  for (; !payload.empty(); payload.remove_prefix(std::min(payload.size(), kMaxFramePayload)))
    out += encode_frame(tag, payload.substr(0, kMaxFramePayload));
  return out;
}

std::vector<Frame> FrameReader::feed(std::string_view bytes) {
  std::vector<Frame> frames;
  if (bytes.empty()) return frames;
  if (finished_) throw malformed("bytes after the result");
  held_.append(bytes);
  std::size_t at = 0;
  while (held_.size() - at >= kHeader) {
    char tag = held_[at];
    if (!known(tag)) throw malformed("unknown frame tag " + std::to_string(static_cast<int>(tag)));
    std::uint32_t len = 0;
    for (std::size_t i = 1; i < kHeader; ++i)
      len = (len << 8) | static_cast<unsigned char>(held_[at + i]);
    if (len > max_payload(static_cast<FrameTag>(tag)))
      throw malformed("a frame of " + std::to_string(len) + " bytes");
    if (held_.size() - at - kHeader < len) break;
    frames.push_back({static_cast<FrameTag>(tag), held_.substr(at + kHeader, len)});
    at += kHeader + len;
    if (tag == static_cast<char>(FrameTag::result) && !serving_) {
      finished_ = true;
      if (at != held_.size()) throw malformed("bytes after the result");
    }
  }
  held_.erase(0, at);
  return frames;
}

}  // namespace cordon::sdk
