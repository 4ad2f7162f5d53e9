// "unlimited" for every limit key, and the rule that a caller's timeout only tightens the
// policy's.
#include <catch2/catch.hpp>
#include <cordon/policy_io.hpp>
#include <cordon/policy_loader.hpp>
#include <cordon/sdk/capabilities.hpp>
#include <cordon/sdk/requirements.hpp>

#include "policy_test_support.hpp"

#include <boost/json.hpp>

using namespace cordon;
using test::TempDir;
using test::text_errors;

namespace {

bool asks(const Policy& p, std::string_view id) {
  return requires_capability(derive_requirements(p), id);
}

}  // namespace

TEST_CASE("policy_limits: a policy extending standard drops an inherited limit with \"unlimited\"",
          "[policy][limits]") {
  TempDir dir;
  auto file = dir.write("nolimit.toml",
                        "version = 1\n[policy]\nextends = \"standard\"\n"
                        "[limits]\nmemory_mb = \"unlimited\"\n");
  Policy p = load_policy_file(file);
  CHECK_FALSE(p.limits.memory_mb);
  CHECK_FALSE(asks(p, cap::limit_memory));
  // Everything else of standard is kept.
  CHECK(p.limits.max_processes == 128u);
  CHECK(asks(p, cap::limit_processes));
  CHECK(asks(load_preset("standard"), cap::limit_memory));
  auto yaml = dir.write("nolimit.yaml",
                        "version: 1\npolicy: {extends: standard}\nlimits: {timeout: unlimited}\n");
  Policy y = load_policy_file(yaml);
  CHECK_FALSE(y.limits.timeout);
  CHECK_FALSE(asks(y, cap::limit_timeout));
  CHECK(y.limits.memory_mb == 512u);
}

TEST_CASE("policy_limits: every limit key takes \"unlimited\", and none asks a capability then",
          "[policy][limits]") {
  Policy p = load_policy_text(
      "version = 1\n[policy]\nextends = \"minimal\"\n[limits]\n"
      "memory_mb = \"unlimited\"\nmax_processes = \"unlimited\"\nmax_open_files = \"unlimited\"\n"
      "cpu_seconds = \"unlimited\"\ncpu_percent = \"unlimited\"\ntimeout = \"unlimited\"\n"
      "max_file_size_mb = \"unlimited\"\njob_lifetime = \"unlimited\"\n"
      "max_output_bytes = \"unlimited\"\nmax_log_bytes = \"unlimited\"\n",
      "p.toml");
  CHECK(p.limits.memory_mb == std::nullopt);
  CHECK(p.limits.max_processes == std::nullopt);
  CHECK(p.limits.max_open_files == std::nullopt);
  CHECK(p.limits.cpu_seconds == std::nullopt);
  CHECK(p.limits.cpu_percent == std::nullopt);
  CHECK(p.limits.timeout == std::nullopt);
  CHECK(p.limits.max_file_size_mb == std::nullopt);
  CHECK(p.limits.job_lifetime == std::nullopt);
  for (const auto& r : derive_requirements(p)) CHECK(r.id.rfind("limit.", 0) != 0);
  // cordon's own buffers always have a size: "unlimited" is the largest they take.
  CHECK(p.limits.max_output_bytes == (std::uint64_t{1} << 50));
  CHECK(p.limits.max_log_bytes == (std::uint64_t{1} << 50));
}

TEST_CASE("policy_limits: 0 is still refused, and the hint names \"unlimited\"",
          "[policy][limits]") {
  auto errors = text_errors("version = 1\n[limits]\nmemory_mb = 0\n", "p.toml");
  REQUIRE(errors.size() == 1);
  CHECK_ERROR_AT(errors, "CRD2005", 3, 13);
  CHECK(errors[0].hint().find("\"unlimited\"") != std::string::npos);
  auto word = text_errors("version: 1\nlimits:\n  max_processes: none\n", "p.yaml");
  REQUIRE(word.size() == 1);
  CHECK_ERROR_AT(word, "CRD2004", 3, 18);
  CHECK(word[0].message() ==
        "expected an integer or \"unlimited\" for 'limits.max_processes', saw string 'none'");
  auto duration = text_errors("version = 1\n[limits]\ntimeout = \"forever\"\n", "p.toml");
  REQUIRE(duration.size() == 1);
  CHECK_ERROR_AT(duration, "CRD2005", 3, 11);
  CHECK(duration[0].hint().find("\"unlimited\"") != std::string::npos);
}

TEST_CASE("policy_limits: show and the schema agree with the loader on \"unlimited\"",
          "[policy][limits][schema]") {
  Policy p = load_policy_text(
      "version = 1\n[policy]\nextends = \"standard\"\n[limits]\nmemory_mb = \"unlimited\"\n"
      "max_output_bytes = \"unlimited\"\n",
      "p.toml");
  const std::string toml = to_toml(p);
  INFO(toml);
  CHECK(toml.find("memory_mb") == std::string::npos);  // no limit: nothing to write
  CHECK(toml.find("max_output_bytes = \"unlimited\"") != std::string::npos);
  for (const auto& [text, name] :
       {std::pair{toml, "out.toml"}, {to_yaml(p), "out.yaml"}, {to_json(p), "out.yaml"}})
    CHECK(load_policy_text(text, name).same_rules(p));
  auto schema = boost::json::parse(policy_json_schema());
  const auto& limits = schema.at("properties").at("limits").at("properties");
  for (const auto& [key, spec] : limits.as_object()) {
    INFO(key);
    bool unlimited = false;
    for (const auto& alt : spec.at("anyOf").as_array())
      unlimited =
          unlimited || (alt.as_object().contains("const") && alt.at("const") == "unlimited");
    CHECK(unlimited);
  }
}

TEST_CASE("policy_limits: a caller's timeout shortens the policy's, never lengthens it",
          "[policy][limits][timeout]") {
  Policy strict = load_preset("strict");  // 30s
  CHECK_FALSE(timeout_loosening(strict, std::chrono::seconds(10), "--timeout"));
  CHECK_FALSE(timeout_loosening(strict, std::chrono::seconds(30), "--timeout"));
  auto longer =
      timeout_loosening(strict, std::chrono::seconds(40), "request /timeout", code::kBadRequest);
  REQUIRE(longer);
  CHECK(longer->code() == "CRD4006");
  CHECK(longer->message() ==
        "request /timeout '40s' is longer than limits.timeout (30s) of policy 'strict': a caller "
        "may shorten the deadline, never lengthen it");
  CHECK(longer->hint().find("timeout = \"40s\"") != std::string::npos);
  CHECK(timeout_loosening(strict, std::chrono::minutes(5), "--timeout")->code() == "CRD4007");
  Policy open;  // no limits.timeout: any deadline tightens it
  CHECK_FALSE(timeout_loosening(open, std::chrono::hours(5), "--timeout"));
}
