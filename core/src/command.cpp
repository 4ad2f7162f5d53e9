// Checks on untrusted arguments: no flag injection, no control characters.
#include <cordon/command.hpp>

#include <cstdio>

namespace cordon {

namespace {

std::string position(std::size_t i) {
  return i == 0 ? "the program (argument 0)" : "argument " + std::to_string(i);
}

// First control character other than tab, or npos. DEL counts; bytes >= 0x80 are UTF-8.
std::size_t control_char(const std::string& v) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    auto c = static_cast<unsigned char>(v[i]);
    if ((c < 0x20 && c != '\t') || c == 0x7f) return i;
  }
  return std::string::npos;
}

// `operands`: a trusted "--" came before, so the program reads this argument as an operand
// even when it starts with '-'.
void check_one(const Argument& a, std::size_t i, bool operands) {
  if (a.value.find('\0') != std::string::npos)
    throw Error(code::kControlChar, position(i) + " contains a NUL byte",
                "a NUL byte cannot be passed to a program; remove it");
  if (!a.untrusted) return;
  if (!operands && !a.value.empty() && a.value[0] == '-')
    throw Error(code::kFlagInjection,
                "untrusted " + position(i) + " starts with '-' and would be read as an option",
                "put '--' before untrusted operands if the program supports it, or pass a "
                "value that does not start with '-' (e.g. './" +
                    a.value + "' for a file)");
  if (auto at = control_char(a.value); at != std::string::npos) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "0x%02x", static_cast<unsigned char>(a.value[at]));
    throw Error(code::kControlChar,
                "untrusted " + position(i) + " contains the control character " + buf +
                    " at offset " + std::to_string(at),
                "remove control characters from untrusted values");
  }
}

}  // namespace

std::vector<std::string> checked_argv(const std::vector<Argument>& args) {
  if (args.empty() || args.front().value.empty())
    throw Error(code::kBadRequest, "no program to run", "give a program and its arguments");
  std::vector<std::string> argv;
  argv.reserve(args.size());
  bool operands = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    check_one(args[i], i, operands);
    // Only the caller's own "--" ends the options; an untrusted one was refused above.
    operands = operands || (i > 0 && !args[i].untrusted && args[i].value == "--");
    argv.push_back(args[i].value);
  }
  return argv;
}

}  // namespace cordon
