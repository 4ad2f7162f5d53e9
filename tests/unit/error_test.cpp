// Tests of cordon::Error, RunResult::cli_status and the head-and-tail sink.
#include <catch2/catch.hpp>
#include <cordon/sdk/error.hpp>
#include <cordon/sdk/result.hpp>

#include "capped_sink.hpp"

using namespace cordon;

TEST_CASE("error: renders code, location, message and hint", "[error]") {
  Error e(code::kUnknownKey, "unknown key 'memry_mb' in [limits]", "did you mean 'memory_mb'?",
          Location{"p.toml", 12, 9});
  CHECK(std::string(e.what()) == "p.toml:12:9: unknown key 'memry_mb' in [limits]");
  CHECK(e.render() ==
        "error[CRD2003]: p.toml:12:9: unknown key 'memry_mb' in [limits]\n"
        "  hint: did you mean 'memory_mb'?");
  CHECK(e.wrap("loading policy").code() == "CRD2003");
  CHECK(e.wrap("loading policy").message() == "loading policy: unknown key 'memry_mb' in [limits]");
}

TEST_CASE("result: cli status follows the documented convention", "[error]") {
  RunResult r;
  r.exit_code = 3;
  CHECK(r.cli_status() == 3);
  r.signal = 9;
  r.exit_code = -1;
  CHECK(r.cli_status() == 137);
  r.timed_out = true;
  CHECK(r.cli_status() == 124);
  RunResult nf;
  nf.error = Error(code::kNotFound, "program 'nope' not found");
  CHECK(nf.cli_status() == 127);
  RunResult ne;
  ne.error = Error(code::kNotExecutable, "not executable");
  CHECK(ne.cli_status() == 126);
  RunResult iso;
  iso.error = Error(code::kIsolationFailed, "landlock failed");
  CHECK(iso.cli_status() == 125);
}

namespace {
struct Collect : OutputSink {
  std::string out, err;
  void write(Stream s, std::string_view c) override { (s == Stream::out ? out : err) += c; }
};
}  // namespace

TEST_CASE("capped_sink: under the cap everything passes", "[sink]") {
  Collect c;
  detail::CappedSink s(c, 100);
  s.write(Stream::out, "hello ");
  s.write(Stream::out, "world");
  s.finish();
  CHECK(c.out == "hello world");
  CHECK_FALSE(s.truncated(Stream::out));
}

TEST_CASE("capped_sink: over the cap head and tail are kept", "[sink]") {
  Collect c;
  detail::CappedSink s(c, 10);
  std::string all;
  for (int i = 0; i < 100; ++i) {
    std::string chunk = std::to_string(i) + ",";
    all += chunk;
    s.write(Stream::err, chunk);
  }
  s.finish();
  CHECK(s.truncated(Stream::err));
  CHECK(s.total(Stream::err) == all.size());
  CHECK(c.err.substr(0, 5) == all.substr(0, 5));
  CHECK(c.err.substr(c.err.size() - 5) == all.substr(all.size() - 5));
  CHECK(c.err.find("bytes omitted") != std::string::npos);
  CHECK(c.out.empty());
}
