// How a policy is named wherever one is given (--policy, a request's "policy", `policy check`):
// a name without '/' or extension is a shipped preset, anything else a file.
#include <catch2/catch.hpp>
#include <cordon/policy_loader.hpp>

#include "policy_test_support.hpp"

using namespace cordon;
using test::errors_of;
using test::TempDir;

TEST_CASE("policy_refs: a name without '/' or extension is a preset, anything else a file",
          "[policy][refs]") {
  for (const char* file : {"strict.toml", "p.yaml", "p.yml", "./strict", "dir/p", "/etc/x"})
    CHECK(names_policy_file(file));
  for (const char* preset : {"strict", "standard", "nosuch", "", "strict.json"})
    CHECK_FALSE(names_policy_file(preset));
}

TEST_CASE("policy_refs: load_policy loads every preset by name, and files by path",
          "[policy][refs]") {
  for (const auto& name : preset_names()) {
    INFO(name);
    CHECK(load_policy(name).same_rules(load_preset(name)));
  }
  TempDir dir;
  auto file =
      dir.write("mine.toml", "version = 1\n[policy]\nname = \"mine\"\nextends = \"strict\"\n");
  CHECK(load_policy(file.string()).name == "mine");
}

TEST_CASE("policy_refs: an unknown name is CRD2007 listing the presets", "[policy][refs]") {
  auto typo = errors_of([] { load_policy("strcit"); });
  REQUIRE(typo.size() == 1);
  CHECK(typo[0].code() == "CRD2007");
  CHECK(typo[0].message() == "unknown preset 'strcit' (did you mean 'strict'?)");
  CHECK(typo[0].hint() ==
        "presets: minimal, standard, generous, strict, permissive; a file needs a '/' or a "
        ".toml, .yaml or .yml extension");
  CHECK_FALSE(typo[0].where());
  auto unknown = errors_of([] { load_policy("mypolicy"); });
  CHECK(unknown.at(0).code() == "CRD2007");
  CHECK(unknown.at(0).message() == "unknown preset 'mypolicy'");
  // The same list for load_preset, which used to name no near preset.
  CHECK(errors_of([] { load_preset("standrad"); }).at(0).message() ==
        "unknown preset 'standrad' (did you mean 'standard'?)");
  // A path is a file: missing is CRD2001, not a preset error.
  CHECK(errors_of([] { load_policy("./strict"); }).at(0).code() == "CRD2011");
  CHECK(errors_of([] { load_policy("/nonexistent/strict.toml"); }).at(0).code() == "CRD2001");
}
