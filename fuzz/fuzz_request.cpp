// libFuzzer target: arbitrary bytes as a JSON run request. Every input must parse or fail with a
// cordon::Error; anything else (a crash, another exception) is a bug.
#include <cordon/request.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    auto r = cordon::parse_run_request(text);
    // A request that parsed has exactly one of argv and command.
    if (r.argv.empty() == !r.command.has_value()) __builtin_trap();
  } catch (const cordon::Error&) {
  }
  return 0;
}
