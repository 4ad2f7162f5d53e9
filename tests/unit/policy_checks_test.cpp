// What `policy check` finds beyond single values: settings that could only fail at run time,
// every error of a file in one pass, warnings, the advisory blocked_imports, and YAML tabs.
#include <catch2/catch.hpp>
#include <cordon/policy_io.hpp>
#include <cordon/policy_loader.hpp>
#include <cordon/sdk/requirements.hpp>

#include "policy_test_support.hpp"

using namespace cordon;
using test::text_errors;

TEST_CASE("policy_checks: a shell without subprocesses is a contradiction", "[policy][checks]") {
  auto errors = text_errors(
      "version = 1\n[process]\nshell = \"sandboxed\"\nallow_subprocess = false\n", "p.toml");
  REQUIRE(errors.size() == 1);
  CHECK_ERROR_AT(errors, "CRD2006", 3, 9);
  CHECK(errors[0].message().find("'process.shell = \"sandboxed\"'") != std::string::npos);
  CHECK(errors[0].message().find("'process.allow_subprocess = false'") != std::string::npos);
  // Inherited from a preset, the error points at the line the user wrote.
  auto extending = text_errors(
      "version: 1\npolicy: {extends: permissive}\nprocess:\n  allow_subprocess: false\n", "p.yaml");
  REQUIRE(extending.size() == 1);
  CHECK_ERROR_AT(extending, "CRD2006", 4, 21);
  CHECK(text_errors("version = 1\n[process]\nshell = \"unsafe\"\nallow_subprocess = false\n",
                    "p.toml")
            .size() == 1);
  // Either one alone is fine.
  CHECK_NOTHROW(load_policy_text("version = 1\n[process]\nallow_subprocess = false\n", "p.toml"));
  CHECK_NOTHROW(load_policy_text("version = 1\n[process]\nshell = \"sandboxed\"\n", "p.toml"));
}

TEST_CASE("policy_checks: a port outside 1-65535 does not hide the contradiction next to it",
          "[policy][checks]") {
  auto errors = text_errors(
      "version = 1\n[network]\nallow = true\nconnect_ports = [70000]\nbind_ports = [0, 8080]\n",
      "p.toml");
  REQUIRE(errors.size() == 4);
  CHECK_ERROR_AT(errors, "CRD2005", 4, 18);
  CHECK_ERROR_AT(errors, "CRD2005", 5, 15);
  CHECK_ERROR_AT(errors, "CRD2006", 4, 17);
  CHECK_ERROR_AT(errors, "CRD2006", 5, 14);
  // An empty list contradicts nothing.
  CHECK_NOTHROW(
      load_policy_text("version = 1\n[network]\nallow = true\nconnect_ports = []\n", "p.toml"));
}

TEST_CASE("policy_checks: connect_ports loads with a warning that names will not resolve",
          "[policy][checks]") {
  Policy p = load_policy_text(
      "version = 1\n[network]\nallow = false\nconnect_ports = [443]\nbind_ports = [8000]\n",
      "p.toml");
  auto warnings = policy_warnings(p);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].code() == "CRD2017");
  REQUIRE(warnings[0].where());
  CHECK(warnings[0].where()->line == 4);
  CHECK(warnings[0].where()->column == 17);
  CHECK(warnings[0].message().find("will not resolve") != std::string::npos);
  CHECK(
      policy_warnings(load_policy_text(
                          "version = 1\n[network]\nallow = false\nbind_ports = [8000]\n", "p.toml"))
          .empty());
  for (const auto& name : preset_names()) CHECK(policy_warnings(load_preset(name)).empty());
}

TEST_CASE("policy_checks: blocked_imports is accepted as advisory and asks no capability",
          "[policy][checks][imports]") {
  const std::string text =
      "version = 1\n[process]\nblocked_imports = [\"subprocess\", \"urllib.request\"]\n";
  Policy p = load_policy_text(text, "p.toml");
  CHECK(p.process.blocked_imports == std::vector<std::string>{"subprocess", "urllib.request"});
  Policy without = load_policy_text("version = 1\n", "p.toml");
  CHECK(derive_requirements(p) == derive_requirements(without));
  auto advisory = advisory_clauses(p);
  REQUIRE(advisory.size() == 1);
  CHECK(advisory[0].clause == "process.blocked_imports (2 modules)");
  CHECK(advisory_note(advisory[0]).find("advisory") != std::string::npos);
  CHECK(advisory_clauses(without).empty());
  auto warnings = policy_warnings(p);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].where()->line == 3);
  // Known to show and the schema; written out and read back the same.
  CHECK(to_toml(p).find("blocked_imports = [") != std::string::npos);
  CHECK(load_policy_text(to_yaml(p), "out.yaml").same_rules(p));
  CHECK(policy_json_schema().find("\"blocked_imports\"") != std::string::npos);
  auto errors =
      text_errors("version: 1\nprocess:\n  blocked_imports: [os, 'a b', .x, 'x.']\n", "p.yaml");
  CHECK(errors.size() == 3);
  CHECK_ERROR_AT(errors, "CRD2005", 3, 25);
}

TEST_CASE("policy_checks: a tab in yaml indentation is named and located",
          "[policy][checks][yaml]") {
  auto errors = text_errors("version: 1\nlimits:\n\tmemory_mb: 128\n", "p.yaml");
  REQUIRE(errors.size() == 1);
  CHECK_ERROR_AT(errors, "CRD2002", 3, 1);
  CHECK(errors[0].message() == "invalid yaml: a tab in the indentation");
  CHECK(errors[0].hint().find("spaces") != std::string::npos);
  auto nested =
      text_errors("version: 1\nnetwork:\n  allow: false\n  \tconnect_ports: [1]\n", "p.yaml");
  REQUIRE(nested.size() == 1);
  CHECK_ERROR_AT(nested, "CRD2002", 4, 3);
  // A tab inside a value is no indentation.
  CHECK(load_policy_text("version: 1\nenv:\n  set: {A: \"x\\ty\"}\n", "p.yaml").env.set.at("A") ==
        "x\ty");
}
