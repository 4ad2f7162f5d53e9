// Tests of the small pure pieces of the policy model: durations, shell modes, presets, equality.
#include <catch2/catch.hpp>
#include <cordon/sdk/policy.hpp>

#include "policy_test_support.hpp"

using namespace cordon;
using namespace std::chrono_literals;

TEST_CASE("policy: parse_duration reads every documented form", "[policy][duration]") {
  CHECK(parse_duration("250ms") == Duration(250));
  CHECK(parse_duration("90s") == Duration(90'000));
  CHECK(parse_duration("5m") == Duration(300'000));
  CHECK(parse_duration("1h") == Duration(3'600'000));
  CHECK(parse_duration("120") == Duration(120'000));
  CHECK(parse_duration("007s") == Duration(7'000));
}

TEST_CASE("policy: parse_duration refuses zero, negatives, overflow and junk",
          "[policy][duration]") {
  for (const char* bad : {"",
                          "0",
                          "0s",
                          "0ms",
                          "-5s",
                          "+5s",
                          "5x",
                          "5 s",
                          " 5s",
                          "5s ",
                          "1.5h",
                          "ms",
                          "s",
                          "h",
                          "5sm",
                          "1d",
                          "0x10",
                          "99999999999999999999",
                          "9223372036854775807h",
                          "9223372036854775807",
                          "5S",
                          "five"}) {
    INFO("text: '" << bad << "'");
    CHECK_FALSE(parse_duration(bad).has_value());
  }
}

TEST_CASE("policy: format_duration picks the largest exact unit", "[policy][duration]") {
  CHECK(format_duration(Duration(250)) == "250ms");
  CHECK(format_duration(Duration(1'500)) == "1500ms");
  CHECK(format_duration(Duration(90'000)) == "90s");
  CHECK(format_duration(Duration(300'000)) == "5m");
  CHECK(format_duration(Duration(7'200'000)) == "2h");
  CHECK(format_duration(Duration(3'660'000)) == "61m");
  for (std::int64_t ms : {1LL, 999LL, 1'000LL, 59'000LL, 61'000LL, 86'400'000LL, 123'456'789LL}) {
    INFO("ms: " << ms);
    CHECK(parse_duration(format_duration(Duration(ms))) == Duration(ms));
  }
}

TEST_CASE("policy: shell modes and every alias of issue 5", "[policy][shell]") {
  for (const char* s : {"off", "", "0", "false", "no", "none", "OFF", "No"})
    CHECK(parse_shell_mode(s) == ShellMode::off);
  for (const char* s : {"sandboxed", "1", "true", "yes", "sandbox", "native", "True", "YES"})
    CHECK(parse_shell_mode(s) == ShellMode::sandboxed);
  for (const char* s : {"unsafe", "raw", "host", "Unsafe"})
    CHECK(parse_shell_mode(s) == ShellMode::unsafe);
  for (const char* s : {"bash", "sh", "2", "on", " off", "sandboxed ", "un safe"})
    CHECK_FALSE(parse_shell_mode(s).has_value());
  CHECK(std::string(to_string(ShellMode::off)) == "off");
  CHECK(std::string(to_string(ShellMode::sandboxed)) == "sandboxed");
  CHECK(std::string(to_string(ShellMode::unsafe)) == "unsafe");
  CHECK(std::string(to_string(HomeMode::private_home)) == "private");
  CHECK(std::string(to_string(HomeMode::host)) == "host");
}

TEST_CASE("policy: every preset is embedded with the text of its file", "[policy][preset]") {
  REQUIRE(preset_names() ==
          std::vector<std::string>{"minimal", "standard", "generous", "strict", "permissive"});
  for (const auto& name : preset_names()) {
    INFO("preset: " << name);
    auto text = preset_text(name);
    REQUIRE(text.has_value());
    CHECK(*text == test::source_file("policies/" + name + ".toml"));
  }
  CHECK_FALSE(preset_text("standrd").has_value());
  CHECK_FALSE(preset_text("").has_value());
}

TEST_CASE("policy: same_rules ignores provenance but not rules", "[policy]") {
  Policy a, b;
  b.origins["limits.memory_mb"] = Location{"x.toml", 3, 1};
  b.sources = {"preset:standard", "x.toml"};
  b.extends = "standard";
  CHECK(a.same_rules(b));
  b.limits.memory_mb = 1;
  CHECK_FALSE(a.same_rules(b));
  Policy c;
  c.backends["docker"] = boost::json::object{{"image", "x"}};
  CHECK_FALSE(a.same_rules(c));
  Policy d;
  d.filesystem.blocked.push_back("/x");
  CHECK_FALSE(a.same_rules(d));
}
