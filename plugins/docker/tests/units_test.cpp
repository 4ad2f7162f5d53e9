// Pure units: frame demultiplexing (adversarial input), addresses, versions, settings, the
// create body and the init's exec-failure line.
#include <boost/json/serialize.hpp>

#include <random>

#include "api.hpp"
#include "container_spec.hpp"
#include "endpoint.hpp"
#include "frames.hpp"
#include "session.hpp"
#include "settings.hpp"
#include "support.hpp"
#include "trailer_hold.hpp"
#include "waiter_blob.hpp"

using namespace cordon;
using namespace cordon::docker;

namespace {

struct Collected {
  std::string out, err, sys;
};

FrameDecoder collector(Collected& c) {
  return FrameDecoder([&c](FrameStream s, std::string_view d) {
    (s == FrameStream::err ? c.err : s == FrameStream::system_error ? c.sys : c.out).append(d);
  });
}

}  // namespace

TEST_CASE("frames: demultiplexes stdout and stderr whatever the piece sizes", "[unit]") {
  std::string wire = frame_header(FrameStream::out, 5) + "hello" +
                     frame_header(FrameStream::err, 3) + "bad" + frame_header(FrameStream::out, 0) +
                     frame_header(FrameStream::out, 1) + "!";
  for (std::size_t piece = 1; piece <= wire.size(); ++piece) {
    Collected c;
    auto d = collector(c);
    for (std::size_t i = 0; i < wire.size(); i += piece)
      REQUIRE(d.feed(std::string_view(wire).substr(i, piece)));
    CHECK(c.out == "hello!");
    CHECK(c.err == "bad");
    CHECK(d.at_boundary());
  }
}

TEST_CASE("frames: a large length is honoured across many pieces", "[unit]") {
  std::string payload(70000, 'z');
  Collected c;
  auto d = collector(c);
  REQUIRE(d.feed(frame_header(FrameStream::out, 70000)));
  REQUIRE(d.feed(payload.substr(0, 1)));
  CHECK_FALSE(d.at_boundary());
  REQUIRE(d.feed(payload.substr(1)));
  CHECK(c.out.size() == 70000);
  CHECK(d.at_boundary());
}

TEST_CASE("frames: malformed headers are refused, and stay refused", "[unit]") {
  Collected c;
  auto bad_type = collector(c);
  CHECK_FALSE(bad_type.feed(std::string("\x04\0\0\0\0\0\0\x01x", 9)));
  CHECK_FALSE(bad_type.error().empty());
  CHECK_FALSE(bad_type.feed(frame_header(FrameStream::out, 1) + "y"));
  auto bad_pad = collector(c);
  CHECK_FALSE(bad_pad.feed(std::string("\x01\0\x01\0\0\0\0\x01x", 9)));
  CHECK(c.out.empty());
  auto system = collector(c);
  CHECK(system.feed(frame_header(FrameStream::system_error, 4) + "oops"));
  CHECK(c.sys == "oops");
}

TEST_CASE("frames: random bytes never crash the decoder", "[unit]") {
  std::mt19937 rng(7);
  for (int round = 0; round < 500; ++round) {
    std::string junk(rng() % 64, '\0');
    for (auto& ch : junk) ch = static_cast<char>(rng() % 5 == 0 ? rng() % 4 : rng());
    Collected c;
    auto d = collector(c);
    d.feed(junk);
    CHECK(c.out.size() + c.err.size() + c.sys.size() <= junk.size());
  }
}

TEST_CASE("endpoint: settings, DOCKER_HOST, then the default socket", "[unit]") {
  std::map<std::string, std::string> vars;
  EnvLookup env = [&vars](const char* n) -> std::optional<std::string> {
    if (!vars.count(n)) return std::nullopt;
    return vars.at(n);
  };
  CHECK(resolve_endpoint("", "", env).socket == "/var/run/docker.sock");
  CHECK(resolve_endpoint("/run/x.sock", "", env).socket == "/run/x.sock");
  vars["DOCKER_HOST"] = "unix:///run/user/1000/docker.sock";
  CHECK(resolve_endpoint("", "", env).socket == "/run/user/1000/docker.sock");
  vars["DOCKER_HOST"] = "tcp://10.0.0.2:2376";
  vars["DOCKER_TLS_VERIFY"] = "1";
  vars["DOCKER_CERT_PATH"] = "/certs";
  auto tls = resolve_endpoint("", "", env);
  CHECK(tls.base_url == "https://10.0.0.2:2376");
  CHECK(tls.tls_verify);
  CHECK(tls.cert_dir == "/certs");
  CHECK(tls.display() == "tcp://10.0.0.2:2376");
  CHECK(resolve_endpoint("", "tcp://h:2375", [](const char*) { return std::nullopt; }).base_url ==
        "http://h:2375");
  CHECK_THROWS_AS(resolve_endpoint("", "ssh://h", env), Error);
  CHECK_THROWS_AS(resolve_endpoint("relative.sock", "", env), Error);
}

TEST_CASE("api: the version is negotiated, never hard-coded", "[unit]") {
  CHECK(parse_api_version("1.41") == ApiVersion{1, 41});
  CHECK_FALSE(parse_api_version("1."));
  CHECK_FALSE(parse_api_version("v1.41"));
  CHECK(negotiate({1, 41}, ApiVersion{1, 12}, "s") == ApiVersion{1, 41});
  CHECK(negotiate({1, 52}, ApiVersion{1, 24}, "s") == kNewestApi);
  CHECK_THROWS_AS(negotiate({1, 25}, std::nullopt, "s"), Error);
  CHECK_THROWS_AS(negotiate({1, 52}, ApiVersion{1, 50}, "s"), Error);
}

TEST_CASE("settings: keys, types and values are checked with their path", "[unit]") {
  using boost::json::object;
  CHECK(validate_settings(object{{"image", "busybox"}}).empty());
  auto missing = validate_settings(object{});
  REQUIRE(missing.size() == 1);
  CHECK(missing[0].code() == "CRD2015");
  CHECK(missing[0].message() == "missing setting 'backends.docker.image'");
  auto typo = validate_settings(object{{"image", "x"}, {"imgae", "y"}});
  REQUIRE(typo.size() == 1);
  CHECK(typo[0].message() == "unknown setting 'backends.docker.imgae' (did you mean 'image'?)");
  CHECK(validate_settings(object{{"image", "x"}, {"pull", true}}).size() == 1);
  CHECK(validate_settings(object{{"image", "x"}, {"pull", false}}).empty());
  CHECK(validate_settings(object{{"image", "x"}, {"user", "1000:1000"}}).empty());
  CHECK(validate_settings(object{{"image", "x"}, {"pool", 99}}).size() == 1);
  CHECK(validate_settings(object{{"image", "x"}, {"socket", "/s"}, {"host", "tcp://h:1"}}).size() ==
        1);
  auto mounts = validate_settings(
      object{{"image", "x"}, {"mounts", boost::json::array{"/a:/b:ro", "/c:/d", "rel:/e"}}});
  REQUIRE(mounts.size() == 1);
  CHECK(mounts[0].message().find("backends.docker.mounts[2]") != std::string::npos);
  auto parsed = parse_settings(object{{"image", "x"}, {"mounts", boost::json::array{"/a:/b:rw"}}});
  REQUIRE(parsed.mounts.size() == 1);
  CHECK(parsed.mounts[0] == ExtraMount{"/a", "/b", true});
}

TEST_CASE("settings: the user cannot spell root, however it is written", "[unit]") {
  using boost::json::object;
  // Root as written: every form the daemon would take for uid or gid 0, and every form a
  // looser reader might (a sign, spaces, an empty side).
  for (const char* user :
       {"0",          "00",          "000000",    "root",        "0:0", "0:1000", "1000:0",
        "1000:00",    "1000:root",   "root:1000", "+0",          " 0",  "0 ",     "-0",
        "+1000",      "1000:",       ":1000",     "1000:1000:1", "a b", "1e3",    "0x0",
        "4294967295", "99999999999", "été",       "x:"}) {
    INFO("user = '" << user << "'");
    auto errors = validate_settings(object{{"image", "x"}, {"user", user}});
    REQUIRE_FALSE(errors.empty());
    CHECK(errors[0].code() == "CRD2015");
    CHECK(errors[0].message().starts_with("'backends.docker.user' must"));
    CHECK(errors[0].message().find(std::string("'") + user + "'") != std::string::npos);
  }
  CHECK(user_problem("+0").starts_with("must be 'uid', 'uid:gid', 'name' or 'name:group'"));
  CHECK(user_problem("00") ==
        "must not be root (uid 0, saw '00'): the command never holds host privileges");
  CHECK(user_problem("1000:root") ==
        "must not be root (gid 0, saw '1000:root'): the command never holds host privileges");
  // Both ways: digits and names the image resolves (a name that is root there is refused by
  // the waiter in the container: the docker tests run it).
  for (const char* user : {"1000", "1000:1000", "65534:65534", "nobody", "nobody:nogroup",
                           "app:1000", "1000:staff", "_svc.x-1", "4294967294"}) {
    INFO("user = '" << user << "'");
    CHECK(user_problem(user).empty());
    CHECK(validate_settings(object{{"image", "x"}, {"user", user}}).empty());
  }
}

TEST_CASE("container_spec: every clause maps to a daemon setting", "[unit]") {
  Policy p;
  p.filesystem.write = {"/ws"};
  p.filesystem.blocked = {"/ws/secret", "/etc/shadow"};
  p.limits.memory_mb = 64;
  p.limits.max_processes = 10;
  p.limits.max_open_files = 32;
  p.limits.cpu_seconds = 5;
  p.limits.max_file_size_mb = 1;
  p.limits.cpu_percent = 50;
  Plan plan;
  plan.policy = p;
  plan.argv = {"echo", "hi"};
  plan.workspace = "/ws";
  plan.env = {{"PATH", "/bin"}, {"A", "1"}};
  Settings s;
  s.image = "img";
  SpecInput in{plan,
               s,
               "run1",
               "1000:1000",
               {"PATH=/x", "SECRET=1"},
               host_mounts(plan, s, {}),
               {},
               "/m/f",
               "/m/d",
               {},
               {},
               {},
               seccomp_profile("x86_64"),
               {}};
  in.blocked = {{"/ws/secret", true, false}, {"/etc/shadow", true, false}};
  auto spec = make_spec(in);
  auto text = boost::json::serialize(spec.body);
  const auto& hc = spec.body.at("HostConfig").as_object();
  CHECK(hc.at("NetworkMode") == "none");
  CHECK(hc.at("Memory") == hc.at("MemorySwap"));
  CHECK(hc.at("PidsLimit").as_int64() == 11);
  CHECK(hc.at("NanoCpus").as_int64() == 500000000);
  CHECK(hc.at("ReadonlyRootfs") == true);
  CHECK(hc.at("CapDrop") == boost::json::array{"ALL"});
  CHECK(hc.at("Init") == true);
  REQUIRE(hc.at("SecurityOpt").as_array().size() == 2);
  CHECK(hc.at("SecurityOpt").as_array()[0] == "no-new-privileges");
  CHECK(hc.at("SecurityOpt").as_array()[1].as_string().starts_with("seccomp={"));
  CHECK(spec.seccomp == in.seccomp->summary());
  CHECK(spec.body.at("Entrypoint").as_array().empty());
  CHECK(spec.body.at("Cmd") == boost::json::array{"echo", "hi"});
  CHECK(spec.body.at("User") == "1000:1000");
  CHECK(spec.body.at("Labels").as_object().at("cordon.run") == "run1");
  // Only /ws/secret lies in a mount; the host's /etc/shadow is not mounted at all.
  REQUIRE(spec.masked == std::vector<std::string>{"/ws/secret"});
  CHECK(spec.removed_env == std::vector<std::string>{"SECRET"});
  CHECK(text.find(R"("SECRET")") != std::string::npos);
  CHECK(text.find("/etc/shadow") == std::string::npos);
  CHECK(hc.at("Mounts").as_array().size() == 2);
  plan.policy.network.allow = true;
  CHECK(make_spec(in).body.at("HostConfig").as_object().at("NetworkMode") == "default");
}

TEST_CASE("session: the init's exec failure line is recognised", "[unit]") {
  CHECK(init_exec_failure("[FATAL tini (7)] exec nosuch failed: No such file or directory\n") ==
        "exec nosuch failed: No such file or directory");
  CHECK(init_exec_failure("[FATAL tini (7)] other\n").empty());
  CHECK(init_exec_failure("exec x failed").empty());
}

namespace {

std::string trailer_for(const std::string& nonce, std::uint32_t status) {
  std::string t = nonce;
  for (int i = 0; i < 4; ++i) t += static_cast<char>((status >> (24 - 8 * i)) & 0xff);
  return t;
}

}  // namespace

TEST_CASE("trailer hold: the trailer is stripped whatever the piece sizes", "[unit]") {
  std::string nonce = "0123456789abcdef";
  // Output that ends with the nonce's first bytes, and contains them elsewhere.
  std::string output = "hello 0123 world 0123456789abcde";
  std::string wire = output + trailer_for(nonce, 42);
  for (std::size_t piece = 1; piece <= wire.size(); ++piece) {
    std::string got;
    TrailerHold hold([&got](std::string_view d) { got.append(d); }, nonce);
    for (std::size_t i = 0; i < wire.size(); i += piece)
      hold.write(std::string_view(wire).substr(i, piece));
    REQUIRE(hold.status() == 42);
    CHECK(hold.finish() == 42);
    CHECK(got == output);
  }
}

TEST_CASE("trailer hold: output is passed on as it comes, not held to the end", "[unit]") {
  std::string nonce = "0123456789abcdef";
  std::string got;
  TrailerHold hold([&got](std::string_view d) { got.append(d); }, nonce);
  std::string banner = "a banner: http://localhost:8000/\n";
  hold.write(banner);
  CHECK(got == banner);
  CHECK(hold.held() == 0);
  // Only what could be the trailer's start waits, and only until it cannot be.
  hold.write("x012");
  CHECK(got == banner + "x");
  CHECK(hold.held() == 3);
  hold.write("y");
  CHECK(got == banner + "x012y");
  CHECK(hold.held() == 0);
  // A stream that ends without the trailer (the container was killed) loses nothing.
  hold.write("01234");
  CHECK_FALSE(hold.finish());
  CHECK(got == banner + "x012y01234");
}

TEST_CASE("trailer hold: without a nonce everything passes and no status is read", "[unit]") {
  std::string got;
  TrailerHold hold([&got](std::string_view d) { got.append(d); }, "");
  std::string bytes = trailer_for(std::string(16, 'n'), 0);
  hold.write(bytes);
  CHECK(got == bytes);
  CHECK_FALSE(hold.finish());
}
