// Input hardening: what a policy's text must be before a parser may see it.
#include <cordon/policy_loader.hpp>

#include "policy_parse.hpp"

#include <cstdio>

namespace cordon::detail {

namespace {

bool ends_with(const std::string& text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

[[noreturn]] void reject(const std::string& name, std::string message, int line, int column,
                         std::string hint) {
  throw Error(code::kInputRejected, std::move(message), std::move(hint),
              Location{name, line, column});
}

// Length of the UTF-8 sequence starting at text[i], or 0 when it is malformed (overlong forms,
// surrogates and code points past U+10FFFF included).
std::size_t utf8_length(std::string_view text, std::size_t i) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  std::size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + len > text.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < len; ++k)
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  return len;
}

void check_bytes(std::string_view text, const std::string& name) {
  int line = 1, column = 1;
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '\0')
      reject(name, "file contains a nul byte", line, column,
             "a policy is UTF-8 text; is this a binary file?");
    std::size_t len = utf8_length(text, i);
    if (len == 0) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", static_cast<unsigned char>(text[i]));
      reject(name, std::string("invalid utf-8 byte ") + hex, line, column,
             "a policy is UTF-8 text; re-encode the file as UTF-8");
    }
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
    i += len;
  }
}

}  // namespace

Format format_for(const std::string& name) {
  if (ends_with(name, ".toml")) return Format::toml;
  if (ends_with(name, ".yaml") || ends_with(name, ".yml")) return Format::yaml;
  throw Error(code::kUnknownFormat, "unknown policy format of '" + name + "'",
              "name the file with a .toml, .yaml or .yml extension", Location{name});
}

void check_input(std::string_view text, Format format, const std::string& name) {
  if (text.size() > kMaxPolicyBytes)
    throw Error(code::kInputRejected,
                "file is " + std::to_string(text.size()) + " bytes, more than the " +
                    std::to_string(kMaxPolicyBytes) + " a policy may have",
                "a policy is a short text file; is this the right file?", Location{name});
  check_bytes(text, name);
  if (format == Format::toml)
    check_toml_nesting(text, name);
  else
    check_yaml_nesting(text, name);
}

Node parse_policy_text(std::string_view text, Format format, const std::string& name) {
  check_input(text, format, name);
  auto file = std::make_shared<const std::string>(name);
  return format == Format::toml ? parse_toml(text, file) : parse_yaml(text, file);
}

}  // namespace cordon::detail
