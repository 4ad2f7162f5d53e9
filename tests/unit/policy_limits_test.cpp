// The rule that a caller's timeout only tightens the policy's.
#include <catch2/catch.hpp>
#include <cordon/policy_loader.hpp>

#include "policy_test_support.hpp"

using namespace cordon;

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
