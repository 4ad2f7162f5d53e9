// The framed stream of `cordon run --framed`: chunk boundaries anywhere, nothing forged.
#include <cordon/sdk/error.hpp>
#include <cordon/sdk/frames.hpp>

#include <catch2/catch.hpp>

using namespace cordon;
using namespace cordon::sdk;

namespace {

std::vector<Frame> feed_bytewise(FrameReader& reader, const std::string& stream) {
  std::vector<Frame> out;
  for (char c : stream)
    for (auto& f : reader.feed(std::string_view(&c, 1))) out.push_back(std::move(f));
  return out;
}

}  // namespace

TEST_CASE("frames: a stream read in chunks of any size gives back every frame exactly") {
  std::string binary("a\0b\xff\n", 5);
  std::string stream = encode_frames(FrameTag::out, "hello ") +
                       encode_frames(FrameTag::err, "oops") + encode_frames(FrameTag::out, binary) +
                       encode_frames(FrameTag::result, R"({"exit_code":0})");
  FrameReader whole;
  auto all = whole.feed(stream);
  REQUIRE(all.size() == 4);
  CHECK(all[0].tag == FrameTag::out);
  CHECK(all[0].payload == "hello ");
  CHECK(all[1].tag == FrameTag::err);
  CHECK(all[2].payload == binary);
  CHECK(all[3].tag == FrameTag::result);
  CHECK(whole.finished());
  CHECK(whole.at_boundary());

  FrameReader bytewise;
  auto same = feed_bytewise(bytewise, stream);
  REQUIRE(same.size() == 4);
  CHECK(same[2].payload == binary);
  CHECK(same[3].payload == R"({"exit_code":0})");
}

TEST_CASE("frames: output that looks like a frame is payload, never a result") {
  // The command prints a forged result frame: it arrives inside an output frame.
  std::string forged = encode_frames(FrameTag::result, R"({"exit_code":0})");
  FrameReader reader;
  auto frames = reader.feed(encode_frames(FrameTag::out, forged));
  REQUIRE(frames.size() == 1);
  CHECK(frames[0].tag == FrameTag::out);
  CHECK(frames[0].payload == forged);
  CHECK_FALSE(reader.finished());
}

TEST_CASE("frames: long output is split, empty output is no frame") {
  std::string big(kMaxFramePayload + 10, 'x');
  FrameReader reader;
  auto frames = reader.feed(encode_frames(FrameTag::out, big));
  REQUIRE(frames.size() == 2);
  CHECK(frames[0].payload.size() + frames[1].payload.size() == big.size());
  CHECK(encode_frames(FrameTag::out, "").empty());
}

TEST_CASE("frames: a malformed stream is CRD5003, not a crash") {
  FrameReader unknown;
  CHECK_THROWS_AS(unknown.feed(std::string("x\0\0\0\1a", 6)), Error);
  FrameReader huge;
  CHECK_THROWS_WITH(huge.feed(std::string("o\xff\xff\xff\xff", 5)), Catch::Contains("malformed"));
  FrameReader after;
  CHECK_THROWS_AS(after.feed(encode_frames(FrameTag::result, "{}") + "o"), Error);
  FrameReader partial;
  partial.feed(std::string("o\0\0", 3));
  CHECK_FALSE(partial.at_boundary());
}

TEST_CASE("frames: a serving stream carries many runs, and an empty frame is a frame") {
  std::string stream = encode_frame(FrameTag::accepted, "") +
                       encode_frames(FrameTag::result, "{}") +
                       encode_frame(FrameTag::accepted, "") + encode_frames(FrameTag::out, "x") +
                       encode_frames(FrameTag::result, "{}");
  FrameReader serving(true);
  auto frames = serving.feed(stream);
  REQUIRE(frames.size() == 5);
  CHECK(frames[0].tag == FrameTag::accepted);
  CHECK(frames[0].payload.empty());
  CHECK_FALSE(serving.finished());
  FrameReader one_run;
  CHECK_THROWS_AS(one_run.feed(stream), Error);  // a second run after the result
}

TEST_CASE("frames: a request is one frame of up to 16 MiB, never split") {
  std::string big(3u << 20, 'q');
  FrameReader serving(true);
  auto frames = serving.feed(encode_frame(FrameTag::request, big));
  REQUIRE(frames.size() == 1);
  CHECK(frames[0].payload.size() == big.size());
  CHECK_THROWS_WITH(encode_frame(FrameTag::request, std::string(kMaxRequestFramePayload + 1, 'q')),
                    Catch::Contains("MiB a request may be"));
  // Output frames stay small: a reader refuses a 3 MiB one.
  std::string header("o\x00\x30\x00\x00", 5);
  FrameReader reader;
  CHECK_THROWS_AS(reader.feed(header), Error);
}
