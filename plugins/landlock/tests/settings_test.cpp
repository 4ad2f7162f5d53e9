// backends.landlock.uid and gid: an identity setting cannot spell root, however it is written.
#include <boost/json/parse.hpp>

#include <cstdint>

#include "settings.hpp"
#include "support.hpp"

using namespace cordon;
using namespace cordon::landlock;

TEST_CASE("settings: uid and gid 0 are refused however they reach the backend", "[settings]") {
  using boost::json::object;
  using boost::json::value;
  // A policy file's 0, -0 or 0x0, a JSON request's -0 and a C++ caller's unsigned 0.
  for (const auto& zero : {value(0), value(std::int64_t{0}), value(std::uint64_t{0}),
                           boost::json::parse("-0"), boost::json::parse("0")})
    for (const char* key : {"uid", "gid"}) {
      INFO(key << " = " << zero);
      auto errors = landlock::validate_settings(object{{key, zero}});
      REQUIRE(errors.size() == 1);
      CHECK(errors[0].code() == "CRD2015");
      CHECK(errors[0].message() == std::string("'backends.landlock.") + key +
                                       "' must not be 0: the sandbox never runs as host root");
      CHECK_FALSE(parse_settings(object{{key, zero}}).uid);
      CHECK_FALSE(parse_settings(object{{key, zero}}).gid);
    }
  // Text is never an id: "+0", "00", " 0", "root", "0:0" and a number in quotes alike.
  for (const char* text : {"+0", "00", " 0", "root", "0:0", "1000"}) {
    INFO(text);
    auto errors = landlock::validate_settings(object{{"uid", text}});
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].message() == "'backends.landlock.uid' must be an integer");
  }
  CHECK(landlock::validate_settings(object{{"gid", 0.0}}).size() == 1);
  CHECK(landlock::validate_settings(object{{"gid", false}}).size() == 1);
  // Both ways: any other id in range is taken, signed or unsigned.
  CHECK(landlock::validate_settings(object{{"uid", std::uint64_t{1000}}, {"gid", 1}}).empty());
  auto s = parse_settings(object{{"uid", std::uint64_t{1000}}, {"gid", 4294967294}});
  CHECK(s.uid == 1000u);
  CHECK(s.gid == 4294967294u);
  CHECK(landlock::validate_settings(object{{"uid", std::uint64_t{4294967295}}}).size() == 1);
}
