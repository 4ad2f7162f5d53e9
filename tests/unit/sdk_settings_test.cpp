// The SDK's check of a backend's settings keys (cordon/sdk/settings.hpp), both ways.
#include <cordon/sdk/settings.hpp>

#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

using namespace cordon;

namespace {

const std::vector<std::string_view> kKnown = {"image", "socket", "pool"};

boost::json::object table(const char* text) { return boost::json::parse(text).as_object(); }

}  // namespace

TEST_CASE("sdk settings: known keys pass, each unknown one is a CRD2015 naming its path",
          "[sdk][settings]") {
  CHECK(sdk::unknown_settings("mine", table(R"({"image":"x","pool":2})"), kKnown).empty());
  auto errors =
      sdk::unknown_settings("mine", table(R"({"imgae":"x","socket":"/s","colour":1})"), kKnown);
  REQUIRE(errors.size() == 2);
  CHECK(errors[0].code() == std::string(code::kBadSettings));
  CHECK(errors[0].message() == "unknown setting 'backends.mine.imgae' (did you mean 'image'?)");
  CHECK(errors[0].hint() == "backend 'mine' takes image, socket and pool");
  CHECK(errors[1].message() == "unknown setting 'backends.mine.colour'");  // nothing close
  CHECK(sdk::known_setting("socket", kKnown));
  CHECK_FALSE(sdk::known_setting("Socket", kKnown));
}

TEST_CASE("sdk settings: a backend that takes none says so", "[sdk][settings]") {
  auto errors = sdk::unknown_settings("plain", table(R"({"x":1})"), {});
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].hint() == "backend 'plain' takes no settings");
}
