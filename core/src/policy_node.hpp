// The format-neutral tree a policy file parses into. TOML and YAML both become this tree, so
// merging (`extends`), decoding and validation are written once.
#pragma once

#include <cordon/sdk/error.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::detail {

/// Where a node was written. The file name is shared by every node of one file.
struct Mark {
  std::shared_ptr<const std::string> file;
  int line = 0;
  int column = 0;

  /// The public Location of this mark.
  Location location() const;
};

/// What a node holds. `datetime` is TOML's date and time types, kept as their text.
enum class NodeType { null, boolean, integer, floating, string, datetime, array, table };

struct NodeEntry;

/// One value of a policy tree, carrying where it was written.
struct Node {
  NodeType type = NodeType::null;
  Mark mark;
  bool boolean = false;
  std::int64_t integer = 0;
  double floating = 0;
  std::string text;                ///< string and datetime
  std::vector<Node> items;         ///< array
  std::vector<NodeEntry> entries;  ///< table, in the order written

  bool is_table() const { return type == NodeType::table; }
  bool is_array() const { return type == NodeType::array; }
  /// The value of `key` in a table, or nullptr.
  const Node* find(std::string_view key) const;
  Node* find(std::string_view key);
  /// Adds `key` to a table, replacing an existing entry of the same name.
  Node& set(std::string key, Node value, Mark key_mark = {});
};

/// A key of a table with the place the key itself was written.
struct NodeEntry {
  std::string key;
  Mark key_mark;
  Node value;
};

/// Node constructors, used by the parsers and the encoders.
Node make_table(Mark mark = {});
Node make_array(Mark mark = {});
Node make_string(std::string text, Mark mark = {});
Node make_integer(std::int64_t value, Mark mark = {});
Node make_bool(bool value, Mark mark = {});

/// "integer 5", "string 'abc'", "array", "table": how an error message names a value it did not
/// expect. Long strings are cut.
std::string describe(const Node& node);

/// Merges `over` into `base`: tables merge key by key, everything else (scalars and lists) is
/// replaced by the value of `over`.
void merge_into(Node& base, const Node& over);

}  // namespace cordon::detail
