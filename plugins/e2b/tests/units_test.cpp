// Pure parts of the e2b backend: settings, Connect envelopes and events, the tar writer (read
// back by tar(1)), and the run's script (run here by /bin/sh).
#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "backend_test_util.hpp"
#include "connect.hpp"
#include "script.hpp"
#include "settings.hpp"

using namespace cordon::e2b;
namespace json = boost::json;

namespace {

std::string be(std::uint8_t flags, const std::string& payload) {
  std::string e = envelope(payload);
  e[0] = static_cast<char>(flags);
  return e;
}

std::string run_shell(const std::string& command) {
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  ::pclose(p);
  return out;
}

std::string sh_word(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

TEST_CASE("settings: defaults, and every mistake named by its key") {
  CHECK(validate(json::object{}).empty());
  Settings s = settings_of(json::object{});
  CHECK(s.api_url == "https://api.e2b.app");
  CHECK(s.envd_base("abc") == "https://49983-abc.e2b.app");
  CHECK(s.envd_base("abc", "eu.e2b.app") == "https://49983-abc.eu.e2b.app");
  CHECK(s.envd_base("abc", "evil.org/x") == "https://49983-abc.e2b.app");  // not a host name
  CHECK(s.api_key_env == "E2B_API_KEY");

  auto errors = validate(json::parse(R"({"api_url":"http://api.example.org","pool":99,
      "lease":5,"workspace":"rel","api_key_env":"9X","upload":"yes","colour":1})")
                             .as_object());
  std::string all;
  for (const auto& e : errors) all += std::string(e.what()) + "\n";
  CHECK(errors.size() == 7);
  CHECK(all.find("'backends.e2b.api_url' must be an https:// URL") != std::string::npos);
  CHECK(all.find("'backends.e2b.pool' must be an integer from 0 to 16") != std::string::npos);
  CHECK(all.find("unknown setting 'backends.e2b.colour'") != std::string::npos);
  CHECK(all.find("'backends.e2b.workspace' must be an absolute path") != std::string::npos);
}

TEST_CASE("settings: http only to this machine") {
  CHECK(loopback_http("http://127.0.0.1:8080"));
  CHECK(loopback_http("http://localhost/x"));
  CHECK(loopback_http("http://[::1]:1"));
  CHECK_FALSE(loopback_http("http://127.0.0.1.evil.org"));
  CHECK_FALSE(loopback_http("http://localhost.evil.org:80"));
  CHECK_FALSE(loopback_http("https://127.0.0.1"));
  CHECK(validate(json::parse(R"({"envd_url":"http://127.0.0.1.nip.io"})").as_object()).size() == 1);
  CHECK(validate(json::parse(R"({"workspace":"/home/user/../../etc"})").as_object()).size() == 1);
  CHECK(validate(json::parse(R"({"workspace":"/home//user"})").as_object()).size() == 1);
  CHECK(validate(json::parse(R"({"workspace":"/home/user/work"})").as_object()).empty());
}

TEST_CASE("connect: envelopes split anywhere are put back together") {
  std::string body = be(0, R"({"event":{"start":{"pid":42}}})") +
                     be(0, R"({"event":{"data":{"stdout":"aGk="}}})") +
                     be(0, R"({"event":{"end":{"exited":true,"status":"exit status 0"}}})") +
                     be(kEndStream, "{}");
  for (std::size_t step : {1u, 3u, 7u, 1000u}) {
    EnvelopeReader r;
    std::vector<Envelope> got;
    for (std::size_t i = 0; i < body.size(); i += step)
      for (auto& e : r.feed(std::string_view(body).substr(i, step))) got.push_back(e);
    REQUIRE(got.size() == 4);
    CHECK(parse_event(got[0].payload).pid == 42);
    CHECK(parse_event(got[1].payload).data == "hi");
    Event end = parse_event(got[2].payload);
    CHECK(end.kind == Event::Kind::end);
    CHECK(end.exit_code == 0);  // omitted: proto3 leaves out a zero
    CHECK(got[3].flags == kEndStream);
    CHECK_FALSE(end_stream_error(got[3].payload));
    CHECK_FALSE(r.partial());
  }
}

TEST_CASE("connect: errors, signals and broken streams") {
  CHECK(*end_stream_error(R"({"error":{"code":"invalid_argument","message":"no cwd"}})") ==
        "invalid_argument: no cwd");
  Event killed = parse_event(R"({"event":{"end":{"exitCode":-1,"status":"signal: killed"}}})");
  CHECK_FALSE(killed.exited);
  CHECK(signal_of_status(killed.status) == 9);
  CHECK(signal_of_status("signal: terminated") == 15);
  CHECK(signal_of_status("signal: segmentation fault (core dumped)") == 11);
  CHECK(signal_of_status("signal: 37") == 37);
  CHECK(signal_of_status("exit status 1") == 0);
  CHECK(parse_event(R"({"event":{"data":{"stderr":"ZXJy"}}})").kind == Event::Kind::err);
  EnvelopeReader r;
  CHECK_THROWS(r.feed(std::string("\x01\x00\x00\x00\x02{}", 7)));  // compressed
  EnvelopeReader big;
  CHECK_THROWS(big.feed(std::string("\x00\x7f\xff\xff\xff", 5)));
  CHECK_THROWS(parse_event(R"({"event":{"data":{"stdout":"!!"}}})"));
}

TEST_CASE("script: argv and environment arrive as given, never as shell text") {
  cordon::testing::TempDir dir("cordon-e2b-script-", 0);
  RunScript run;
  run.workspace = dir.path().string();
  run.env = {{"PATH", "/usr/bin:/bin"}, {"GRANTED", "a b $(c)"}};
  run.ulimits = {{'n', 64}};
  run.argv = {"/bin/sh", "-c",         "printf '%s|' \"$@\"; env | sort; ulimit -n; pwd",
              "x",       "; rm -rf /", "$(id)",
              "-v",      "a'b\"c",     "--"};
  StartSpec spec = run_spec(run);
  CHECK(spec.cmd == "/bin/sh");
  CHECK_FALSE(spec.stdin);
  std::string line = sh_word(spec.cmd);
  for (const auto& a : spec.args) line += " " + sh_word(a);
  std::string out = run_shell("env -i SECRET=1 PATH=/usr/bin:/bin " + line + " 2>&1");
  CHECK(out.rfind(std::string(kReady), 0) == 0);
  CHECK(out.find("; rm -rf /|$(id)|-v|a'b\"c|--|") != std::string::npos);
  CHECK(out.find("GRANTED=a b $(c)") != std::string::npos);
  CHECK(out.find("HOME=/tmp/cordon-home-") != std::string::npos);
  CHECK(out.find("SECRET") == std::string::npos);
  CHECK(out.find("\n64\n") != std::string::npos);
  CHECK(out.find(dir.path().string()) != std::string::npos);
  run_shell("rm -rf /tmp/cordon-home-*");
}

TEST_CASE("script: a workspace that is not there fails before the ready line") {
  RunScript run;
  run.workspace = "/nonexistent/cordon-e2b";
  run.argv = {"true"};
  StartSpec spec = run_spec(run);
  std::string line = sh_word(spec.cmd);
  for (const auto& a : spec.args) line += " " + sh_word(a);
  std::string out = run_shell(line + " 2>&1; echo status=$?");
  CHECK(out.find("cordon-e2b: cannot enter the workspace") != std::string::npos);
  CHECK(out.find("status=125") != std::string::npos);
  CHECK(out.find(std::string(kReady)) == std::string::npos);
}
