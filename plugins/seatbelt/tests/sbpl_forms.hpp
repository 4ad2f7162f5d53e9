// What the SBPL tests' parser, checker and evaluator (sbpl.cpp, sbpl_eval.cpp) both need to
// know about a parsed form: its place, its head, whether it is a rule, the known operations.
#pragma once

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "sbpl.hpp"

namespace cordon::seatbelt::test::forms {

using Params = std::map<std::string, std::string>;
using Names = std::set<std::string, std::less<>>;
using Kind = SExpr::Kind;
constexpr auto npos = std::string_view::npos;

inline std::string where(int line, int column) {
  return std::to_string(line) + ":" + std::to_string(column) + ": ";
}

inline std::string where(const SExpr& e) { return where(e.line, e.column); }

// clang-format off
inline const Names& operations() {
  static const Names names = {
      "default", "process-exec", "process-fork", "process-info*", "signal", "sysctl-read",
      "mach-lookup", "file-read*", "file-read-data", "file-read-metadata", "file-write*",
      "file-write-data", "file-write-create", "file-write-unlink", "file-ioctl",
      "file-map-executable", "network*", "network-outbound", "network-inbound", "network-bind",
      "system-socket", "ipc-posix-sem", "ipc-posix-shm*", "pseudo-tty", "user-preference-read",
      "iokit-open"};
  return names;
}
// clang-format on

// The symbol a list starts with, or null.
inline const std::string* head(const SExpr& e) {
  if (e.kind != Kind::list || e.items.empty() || e.items[0].kind != Kind::symbol) return nullptr;
  return &e.items[0].text;
}

inline bool is_head(const SExpr& e, std::string_view name) { return head(e) && *head(e) == name; }

inline bool is_symbol(const SExpr& e, std::string_view name) {
  return e.kind == Kind::symbol && e.text == name;
}

inline bool is_rule(const SExpr& e) { return is_head(e, "allow") || is_head(e, "deny"); }

inline bool is_default_rule(const SExpr& e) {
  return is_rule(e) && std::any_of(e.items.begin() + 1, e.items.end(),
                                   [](const SExpr& x) { return is_symbol(x, "default"); });
}

// "host:port" split at its last colon; no colon gives an empty port.
inline std::pair<std::string_view, std::string_view> split_address(std::string_view address) {
  auto colon = address.rfind(':');
  if (colon == npos) return {address, ""};
  return {address.substr(0, colon), address.substr(colon + 1)};
}

}  // namespace cordon::seatbelt::test::forms
