// Tests of writing policies out (TOML, YAML, JSON round-trips) and of the JSON Schema.
#include <catch2/catch.hpp>
#include <cordon/policy_io.hpp>
#include <cordon/policy_loader.hpp>

#include "policy_test_support.hpp"

#include <boost/json.hpp>

#include <cstdlib>

using namespace cordon;

namespace {

// Loads each serialisation of `p` back and checks that it states the same rules.
void check_round_trips(const Policy& p) {
  const std::string toml = to_toml(p), yaml = to_yaml(p), json = to_json(p);
  INFO("toml:\n" << toml << "\nyaml:\n" << yaml << "\njson:\n" << json);
  try {
    CHECK(load_policy_text(toml, "out.toml").same_rules(p));
    CHECK(load_policy_text(yaml, "out.yaml").same_rules(p));
    CHECK(load_policy_text(json, "out.yaml").same_rules(p));  // JSON is YAML
  } catch (const ErrorList& e) {
    FAIL(e.what());
  }
}

}  // namespace

TEST_CASE("policy_io: every preset and example round-trips through each format", "[policy][io]") {
  for (const auto& name : preset_names()) {
    INFO("preset: " << name);
    check_round_trips(load_preset(name));
  }
  const auto examples = std::filesystem::path(CORDON_SOURCE_DIR) / "policies" / "examples";
  for (const auto& entry : std::filesystem::directory_iterator(examples)) {
    INFO("example: " << entry.path().string());
    check_round_trips(load_policy_file(entry.path()));
  }
}

TEST_CASE("policy_io: awkward values round-trip", "[policy][io]") {
  Policy p;
  p.name = "quotes \" and \\ and caf\xc3\xa9";
  p.limits.timeout = Duration(1'500);
  p.limits.job_lifetime = Duration(7'200'000);
  p.limits.memory_mb = 1;
  p.filesystem.read_host = true;
  p.filesystem.read.clear();
  p.filesystem.write = {"{workspace}", "/tmp/with space", "/t/#not-a-comment", "relative"};
  check_round_trips(p);
  p.filesystem.write_host = true;  // write = "host"
  p.filesystem.write.clear();
  p.filesystem.blocked = {};
  p.network.connect_ports = {1, 65535};
  p.process.shell = ShellMode::unsafe;
  p.process.allowed_commands = {"git", "true", "null", "1"};
  p.env.set = {{"EMPTY", ""}, {"NEWLINE", "a\nb\tc"}, {"YES", "yes"}, {"NUM", "007"}};
  p.env.pass = {"CI"};
  p.backend.prefer = {"docker"};
  p.backends["docker"] = boost::json::object{
      {"image", "python:3.11-slim"},
      {"cpus", 1.5},
      {"whole", 2.0},
      {"mounts", boost::json::array{boost::json::object{{"ro", true}, {"path", "/x"}}}},
      {"nested", boost::json::object{{"deeper", boost::json::object{{"n", -3}}}}},
      {"key with space", "v"},
      {"true", "k"},
  };
  check_round_trips(p);
}

TEST_CASE("policy_io: the defaults round-trip and unset limits stay unset", "[policy][io]") {
  Policy p;
  check_round_trips(p);
  const std::string toml = to_toml(p);
  CHECK(toml.find("memory_mb") == std::string::npos);
  CHECK(toml.find("extends") == std::string::npos);
  CHECK(toml.find("version = 1") != std::string::npos);
}

TEST_CASE("policy_io: to_json is an object with the policy's sections", "[policy][io]") {
  Policy p = load_preset("standard");
  auto value = boost::json::parse(to_json(p));
  REQUIRE(value.is_object());
  CHECK(value.at("version") == 1);
  CHECK(value.at("limits").at("memory_mb") == 512);
  CHECK(value.at("limits").at("timeout") == "1m");
  CHECK(value.at("filesystem").at("home") == "private");
  CHECK(value.at("policy").at("name") == "standard");
}

TEST_CASE("policy_io: the schema names every key of every section", "[policy][io][schema]") {
  auto schema = boost::json::parse(policy_json_schema());
  CHECK(schema.at("$schema") == "https://json-schema.org/draft/2020-12/schema");
  CHECK(schema.at("required").at(0) == "version");
  CHECK(schema.at("additionalProperties") == false);
  const auto& props = schema.at("properties");
  CHECK(props.at("version").at("const") == 1);
  CHECK(props.at("limits").at("additionalProperties") == false);
  const auto& memory = props.at("limits").at("properties").at("memory_mb").at("anyOf");
  CHECK(memory.at(0).at("minimum") == 1);
  CHECK(memory.at(1).at("const") == "unlimited");
  CHECK(props.at("limits").at("properties").at("cpu_percent").at("anyOf").at(0).at("maximum") ==
        10000);
  CHECK(props.at("network").at("properties").at("connect_ports").at("items").at("maximum") ==
        65535);
  CHECK(props.at("filesystem").at("properties").at("home").at("enum").as_array().size() == 2);
  CHECK(props.at("process").at("properties").as_object().contains("shell"));
  CHECK(props.at("backends").at("type") == "object");
  CHECK(props.at("limits").at("properties").at("max_output_bytes").at("default") == 1048576);
  // The format has 29 keys: version, backends and 27 inside the sections.
  std::size_t count = 2;
  for (const auto& [name, section] : props.as_object())
    if (name != "version" && name != "backends")
      count += section.at("properties").as_object().size();
  CHECK(count == 29);
}

TEST_CASE("policy_io: the committed schema file is current", "[policy][io][schema]") {
  const auto file =
      std::filesystem::path(CORDON_SOURCE_DIR) / "policies" / "cordon-policy.schema.json";
  const std::string generated = policy_json_schema();
  if (const char* regen = std::getenv("CORDON_REGENERATE_SCHEMA"); regen && *regen == '1') {
    std::ofstream(file, std::ios::binary) << generated;
    WARN("rewrote " << file.string());
  }
  INFO(
      "policies/cordon-policy.schema.json is stale; regenerate it with\n"
      "  CORDON_REGENERATE_SCHEMA=1 build/dev/tests/cordon-unit-tests \"[schema]\"\n"
      "or `cordon policy schema > policies/cordon-policy.schema.json`, and commit it");
  CHECK(test::source_file("policies/cordon-policy.schema.json") == generated);
}
