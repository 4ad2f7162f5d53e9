// Every shipped policy file loads and validates; the TOML and YAML forms of one policy agree.
#include <catch2/catch.hpp>
#include <cordon/policy_loader.hpp>

#include "policy_test_support.hpp"

#include <algorithm>

using namespace cordon;

namespace {

std::vector<std::filesystem::path> policy_files(const std::string& relative) {
  std::vector<std::filesystem::path> out;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(CORDON_SOURCE_DIR) / relative)) {
    const auto ext = entry.path().extension();
    if (entry.is_regular_file() && (ext == ".toml" || ext == ".yaml" || ext == ".yml"))
      out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("policy_files: every file in policies/ and policies/examples/ loads", "[policy][files]") {
  auto files = policy_files("policies");
  auto examples = policy_files("policies/examples");
  CHECK(files.size() >= 5);
  CHECK(examples.size() >= 3);
  files.insert(files.end(), examples.begin(), examples.end());
  for (const auto& file : files) {
    INFO("policy: " << file.string());
    try {
      Policy p = load_policy_file(file);
      CHECK(p.version == 1);
      CHECK_FALSE(p.name.empty());
      CHECK(p.sources.back() == file.string());
    } catch (const ErrorList& e) {
      FAIL(e.what());
    }
  }
}

TEST_CASE("policy_files: each preset file equals its embedded copy", "[policy][files]") {
  for (const auto& name : preset_names()) {
    INFO("preset: " << name);
    Policy embedded = load_preset(name);
    Policy file =
        load_policy_file(std::filesystem::path(CORDON_SOURCE_DIR) / "policies" / (name + ".toml"));
    CHECK(embedded.same_rules(file));
    CHECK(embedded.name == name);
    CHECK(embedded.sources == std::vector<std::string>{"preset:" + name});
  }
}

TEST_CASE("policy_files: the toml and yaml agent-coding examples resolve equal",
          "[policy][files]") {
  const auto dir = std::filesystem::path(CORDON_SOURCE_DIR) / "policies" / "examples";
  Policy toml = load_policy_file(dir / "agent-coding.toml");
  Policy yaml = load_policy_file(dir / "agent-coding.yaml");
  CHECK(toml.same_rules(yaml));
  CHECK(toml.limits.memory_mb == 1024u);
  CHECK(toml.limits.timeout == Duration(300'000));
  CHECK(toml.env.set.at("PYTHONDONTWRITEBYTECODE") == "1");
  CHECK(toml.filesystem.write == std::vector<std::string>{"{workspace}", "/tmp"});
  // Same keys, recorded at their places in each file.
  CHECK(toml.origins.at("limits.memory_mb").line == 9);
  CHECK(yaml.origins.at("limits.memory_mb").line == 7);
}

TEST_CASE("policy_files: the presets keep their documented tiers", "[policy][files]") {
  Policy minimal = load_preset("minimal"), standard = load_preset("standard"),
         generous = load_preset("generous");
  CHECK(minimal.limits.memory_mb == 128u);
  CHECK(minimal.limits.timeout == Duration(30'000));
  CHECK_FALSE(minimal.network.allow);
  CHECK(standard.limits.memory_mb == 512u);
  CHECK(standard.limits.timeout == Duration(60'000));
  CHECK_FALSE(standard.network.allow);
  CHECK(generous.limits.memory_mb == 2048u);
  CHECK(generous.limits.timeout == Duration(300'000));
  CHECK(generous.network.allow);
  CHECK(load_preset("permissive").filesystem.read_host);
  CHECK_FALSE(load_preset("strict").process.allow_subprocess);
}
