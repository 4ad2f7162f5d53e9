// YAML plain scalars by the YAML 1.2 core schema: yaml-cpp hands every scalar over as text.
#include "policy_parse.hpp"

#include <charconv>
#include <cmath>
#include <optional>

namespace cordon::detail {

namespace {

constexpr std::string_view kStrTag = "tag:yaml.org,2002:str";

bool is_null_text(const std::string& s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

std::optional<bool> bool_text(const std::string& s) {
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  return std::nullopt;
}

bool all_of(std::string_view s, bool (*pred)(char)) {
  if (s.empty()) return false;
  for (char c : s)
    if (!pred(c)) return false;
  return true;
}

bool is_dec(char c) { return c >= '0' && c <= '9'; }
bool is_oct(char c) { return c >= '0' && c <= '7'; }
bool is_hex(char c) { return is_dec(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// Digits and base of a core-schema integer, or nullopt when `s` is not one.
std::optional<std::pair<std::string_view, int>> int_form(std::string_view s) {
  if (s.starts_with("0o") && all_of(s.substr(2), is_oct)) return std::pair{s.substr(2), 8};
  if (s.starts_with("0x") && all_of(s.substr(2), is_hex)) return std::pair{s.substr(2), 16};
  std::string_view digits = (s.starts_with('-') || s.starts_with('+')) ? s.substr(1) : s;
  if (all_of(digits, is_dec)) return std::pair{s.starts_with('+') ? digits : s, 10};
  return std::nullopt;
}

// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?, the core schema's float.
bool is_float_text(std::string_view s) {
  std::size_t i = 0;
  auto digits = [&] {
    std::size_t start = i;
    while (i < s.size() && is_dec(s[i])) ++i;
    return i - start;
  };
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  std::size_t whole = digits(), fraction = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    fraction = digits();
  }
  if (whole == 0 && fraction == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == s.size();
}

Node integer(std::pair<std::string_view, int> form, const std::string& s, Mark where) {
  std::int64_t value = 0;
  auto [digits, base] = form;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value, base);
  if (ec != std::errc() || end != digits.data() + digits.size())
    throw Error(code::kBadValue, "integer '" + s + "' is out of range", "", where.location());
  return make_integer(value, where);
}

Node floating(const std::string& s, Mark where) {
  Node out;
  out.type = NodeType::floating;
  out.mark = where;
  if (s.find("inf") != std::string::npos || s.find("Inf") != std::string::npos)
    out.floating = s[0] == '-' ? -INFINITY : INFINITY;
  else if (s.find("aN") != std::string::npos || s.find("an") != std::string::npos)
    out.floating = NAN;
  else
    std::from_chars(s.data() + (s[0] == '+' ? 1 : 0), s.data() + s.size(), out.floating);
  return out;
}

}  // namespace

Node resolve_yaml_scalar(const std::string& tag, const std::string& s, Mark where) {
  if (tag == "!" || tag == kStrTag) return make_string(s, where);
  if (tag != "?")
    throw Error(code::kSyntax, "unsupported yaml tag '" + tag + "'",
                "write plain values; only !!str is understood", where.location());
  if (is_null_text(s)) {
    Node out;
    out.mark = where;
    return out;
  }
  if (auto b = bool_text(s)) return make_bool(*b, where);
  if (auto form = int_form(s)) return integer(*form, s, where);
  if (is_float_text(s) || s == ".inf" || s == "+.inf" || s == "-.inf" || s == ".Inf" ||
      s == "-.Inf" || s == ".nan" || s == ".NaN")
    return floating(s, where);
  return make_string(s, where);
}

}  // namespace cordon::detail
