// libFuzzer target: arbitrary bytes as a command string. The splitter must split or refuse with a
// cordon::Error, and agree with the operator scan: a string it splits holds no operator.
#include <cordon/shell_syntax.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  bool has_operator = cordon::find_shell_operator(text).has_value();
  try {
    auto words = cordon::split_command(text);
    if (has_operator || words.empty()) __builtin_trap();
  } catch (const cordon::Error& e) {
    if (has_operator != (e.code() == cordon::code::kShellOperator)) __builtin_trap();
  }
  return 0;
}
