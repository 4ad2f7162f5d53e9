// The shipped presets compiled into policy trees at build time (core/presetgen), so that
// loading one parses no TOML: `cordon run` loads the `standard` preset on every start.
#pragma once

#include <cordon/sdk/export.hpp>

#include "policy_node.hpp"

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>

namespace cordon::detail {

/// The tree of the shipped preset `name`, exactly as parse_policy_text makes it from the
/// preset's text (marks included); nullopt when no preset has that name. The tests compare the
/// two for every preset.
CORDON_API std::optional<Node> compiled_preset(const std::string& name);

/// Node constructors for the generated code.
namespace compiled {

inline Node table(Mark mark, std::initializer_list<NodeEntry> entries) {
  Node n = make_table(std::move(mark));
  n.entries.assign(entries.begin(), entries.end());
  return n;
}

inline NodeEntry entry(const char* key, Mark key_mark, Node value) {
  return NodeEntry{key, std::move(key_mark), std::move(value)};
}

inline Node array(Mark mark, std::initializer_list<Node> items) {
  Node n = make_array(std::move(mark));
  n.items.assign(items.begin(), items.end());
  return n;
}

inline Node string(const char* text, Mark mark) { return make_string(text, std::move(mark)); }

inline Node integer(std::int64_t value, Mark mark) { return make_integer(value, std::move(mark)); }

inline Node boolean(bool value, Mark mark) { return make_bool(value, std::move(mark)); }

inline Node floating(double value, Mark mark) {
  Node n;
  n.type = NodeType::floating;
  n.floating = value;
  n.mark = std::move(mark);
  return n;
}

inline Node datetime(const char* text, Mark mark) {
  Node n;
  n.type = NodeType::datetime;
  n.text = text;
  n.mark = std::move(mark);
  return n;
}

}  // namespace compiled

}  // namespace cordon::detail
