// How long a policy takes from text to requirements: load (parse, presets, extends), validate,
// derive_requirements. Reported in microseconds per policy.
#include <benchmark/benchmark.h>
#include <cordon/policy_loader.hpp>
#include <cordon/sdk/requirements.hpp>

#include <filesystem>
#include <string>

namespace {

// A policy with 200 paths: 120 readable, 40 writable, 40 blocked, extending `standard`.
std::string generated_policy(bool yaml) {
  auto list = [&](const std::string& prefix, int n) {
    std::string out = "[";
    for (int i = 0; i < n; ++i) out += (i ? ", \"" : "\"") + prefix + std::to_string(i) + "\"";
    return out + "]";
  };
  const std::string read = list("/opt/tool/lib", 120), write = list("{workspace}/out/dir", 40),
                    blocked = list("~/.secrets/key", 40);
  if (yaml)
    return "version: 1\npolicy: {name: big, extends: standard}\nfilesystem:\n  read: " + read +
           "\n  write: " + write + "\n  blocked: " + blocked + "\n";
  return "version = 1\n[policy]\nname = \"big\"\nextends = \"standard\"\n[filesystem]\nread = " +
         read + "\nwrite = " + write + "\nblocked = " + blocked + "\n";
}

void run(benchmark::State& state, const auto& load) {
  for (auto _ : state) {
    cordon::Policy p = load();
    cordon::Requirements r = cordon::derive_requirements(p);
    benchmark::DoNotOptimize(r);
  }
}

void BM_StandardPreset(benchmark::State& state) {
  run(state, [] { return cordon::load_preset("standard"); });
}

void BM_StandardFile(benchmark::State& state) {
  const auto file = std::filesystem::path(CORDON_SOURCE_DIR) / "policies" / "standard.toml";
  run(state, [&] { return cordon::load_policy_file(file); });
}

void BM_AgentCodingYaml(benchmark::State& state) {
  const auto file =
      std::filesystem::path(CORDON_SOURCE_DIR) / "policies" / "examples" / "agent-coding.yaml";
  run(state, [&] { return cordon::load_policy_file(file); });
}

void BM_Generated200PathsToml(benchmark::State& state) {
  const std::string text = generated_policy(false);
  run(state, [&] { return cordon::load_policy_text(text, "big.toml"); });
}

void BM_Generated200PathsYaml(benchmark::State& state) {
  const std::string text = generated_policy(true);
  run(state, [&] { return cordon::load_policy_text(text, "big.yaml"); });
}

}  // namespace

BENCHMARK(BM_StandardPreset)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_StandardFile)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AgentCodingYaml)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Generated200PathsToml)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Generated200PathsYaml)->Unit(benchmark::kMicrosecond);
BENCHMARK_MAIN();
