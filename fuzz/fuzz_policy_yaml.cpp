// libFuzzer target: arbitrary bytes as a YAML policy file.
#include "fuzz_policy_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return cordon::fuzz::run_one(data, size, "fuzz.yaml");
}
