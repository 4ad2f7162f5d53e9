// `cordon serve --framed`: many requests over one stdin, each answered by an accepted frame,
// output frames and a result; a stop frame reaches its run; bad input is a result, not a crash.
#include <cordon/sdk/frames.hpp>

#include <boost/json.hpp>

#include <fstream>

#include "cli.hpp"

using namespace cordon;
namespace json = boost::json;

namespace {

std::string request(const std::string& argv_json, const std::string& extra = "") {
  return R"({"argv":)" + argv_json +
         R"(,"policy":{"version":1,"policy":{"name":"serve-test"}},"workspace":"/tmp")" + extra +
         "}";
}

// What `cordon serve --framed` answered to the frames in `input`.
std::vector<sdk::Frame> served(itest::Scratch& s, const std::string& input) {
  auto in = (s.dir / "in").string();
  std::ofstream(in, std::ios::binary) << input;
  escape::SpawnOptions o;
  // stdin stays open a while: its end means the caller went away, which kills what runs.
  o.argv = {"/bin/sh", "-c", "(cat " + in + "; sleep 2) | " + CORDON_CLI + " serve --framed"};
  auto r = escape::run_process(o);
  INFO(r.err);
  CHECK(r.status == 0);
  sdk::FrameReader reader(true);
  return reader.feed(r.out);
}

std::vector<json::object> results(const std::vector<sdk::Frame>& frames) {
  std::vector<json::object> out;
  for (const auto& f : frames)
    if (f.tag == sdk::FrameTag::result) out.push_back(json::parse(f.payload).as_object());
  return out;
}

}  // namespace

TEST_CASE("serve: requests one after another, each with its output and result", "[serve][cli]") {
  itest::Scratch s;
  auto frames =
      served(s, sdk::encode_frame(sdk::FrameTag::request,
                                  request(R"(["sh","-c","echo one; echo two >&2; exit 3"])")) +
                    sdk::encode_frame(sdk::FrameTag::request, request(R"(["echo","again"])")));
  REQUIRE(frames.size() == 7);
  CHECK(frames[0].tag == sdk::FrameTag::accepted);
  std::string out, err;
  for (const auto& f : frames) {
    if (f.tag == sdk::FrameTag::out) out += f.payload;
    if (f.tag == sdk::FrameTag::err) err += f.payload;
  }
  CHECK(out == "one\nagain\n");
  CHECK(err == "two\n");
  auto r = results(frames);
  REQUIRE(r.size() == 2);
  CHECK(r[0].at("exit_code").as_int64() == 3);
  CHECK(r[1].at("exit_code").as_int64() == 0);
}

TEST_CASE("serve: a stop frame ends its run, and a bad request is a result with its error",
          "[serve][cli]") {
  itest::Scratch s;
  auto frames = served(s, sdk::encode_frame(sdk::FrameTag::request, request(R"(["sleep","30"])")) +
                              sdk::encode_frames(sdk::FrameTag::stop, "kill") +
                              sdk::encode_frame(sdk::FrameTag::request, "not json") +
                              sdk::encode_frame(sdk::FrameTag::request, request(R"(["true"])")));
  auto r = results(frames);
  REQUIRE(r.size() == 3);
  CHECK(r[0].at("signal").as_int64() == 9);
  CHECK(r[0].at("duration_ms").to_number<double>() < 20000);
  CHECK(r[1].at("error").at("code").as_string() == "CRD4006");
  CHECK(r[2].at("exit_code").as_int64() == 0);
  CHECK(r[2].at("error").is_null());
}

TEST_CASE("serve: a stream that is not frames ends the server, never a crash", "[serve][cli]") {
  itest::Scratch s;
  auto frames = served(s, "GET / HTTP/1.1\r\n\r\n");
  CHECK(frames.empty());
}

TEST_CASE("serve: the end of stdin (the caller went away) kills the run in progress",
          "[serve][cli]") {
  itest::Scratch s;
  auto in = (s.dir / "in").string();
  std::ofstream(in, std::ios::binary)
      << sdk::encode_frame(sdk::FrameTag::request, request(R"(["sleep","30"])"));
  escape::SpawnOptions o;
  o.argv = {"/bin/sh", "-c", "(cat " + in + "; sleep 1) | " + CORDON_CLI + " serve --framed"};
  auto r = escape::run_process(o);
  CHECK(r.status == 0);
  CHECK(r.wall < std::chrono::seconds(20));
  sdk::FrameReader reader(true);
  auto got = results(reader.feed(r.out));
  REQUIRE(got.size() == 1);
  CHECK(got[0].at("signal").as_int64() == 9);
}
