// The format-neutral policy tree: constructors, lookup, description and merging.
#include "policy_node.hpp"

#include <charconv>
#include <unordered_map>

namespace cordon::detail {

Location Mark::location() const { return Location{file ? *file : std::string(), line, column}; }

const Node* Node::find(std::string_view key) const {
  for (const auto& entry : entries)
    if (entry.key == key) return &entry.value;
  return nullptr;
}

Node* Node::find(std::string_view key) {
  for (auto& entry : entries)
    if (entry.key == key) return &entry.value;
  return nullptr;
}

Node& Node::set(std::string key, Node value, Mark key_mark) {
  for (auto& entry : entries) {
    if (entry.key == key) {
      entry.value = std::move(value);
      entry.key_mark = std::move(key_mark);
      return entry.value;
    }
  }
  entries.push_back(NodeEntry{std::move(key), std::move(key_mark), std::move(value)});
  return entries.back().value;
}

Node make_table(Mark mark) {
  Node n;
  n.type = NodeType::table;
  n.mark = std::move(mark);
  return n;
}

Node make_array(Mark mark) {
  Node n;
  n.type = NodeType::array;
  n.mark = std::move(mark);
  return n;
}

Node make_string(std::string text, Mark mark) {
  Node n;
  n.type = NodeType::string;
  n.text = std::move(text);
  n.mark = std::move(mark);
  return n;
}

Node make_integer(std::int64_t value, Mark mark) {
  Node n;
  n.type = NodeType::integer;
  n.integer = value;
  n.mark = std::move(mark);
  return n;
}

Node make_bool(bool value, Mark mark) {
  Node n;
  n.type = NodeType::boolean;
  n.boolean = value;
  n.mark = std::move(mark);
  return n;
}

namespace {

// Quotes a value for a message, cutting long ones and showing control characters as '?' so a
// message stays one readable line.
std::string quote_text(std::string_view text) {
  constexpr std::size_t kMax = 40;
  std::string out = "'";
  for (std::size_t i = 0; i < text.size() && i < kMax; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    out += (c < 0x20 || c == 0x7f) ? '?' : static_cast<char>(c);
  }
  if (text.size() > kMax) out += "...";
  return out + "'";
}

}  // namespace

std::string describe(const Node& node) {
  switch (node.type) {
    case NodeType::null:
      return "an empty value";
    case NodeType::boolean:
      return node.boolean ? "boolean true" : "boolean false";
    case NodeType::integer:
      return "integer " + std::to_string(node.integer);
    case NodeType::floating: {
      char buf[64];
      auto res = std::to_chars(buf, buf + sizeof buf, node.floating);
      return "float " + std::string(buf, res.ptr);
    }
    case NodeType::string:
      return "string " + quote_text(node.text);
    case NodeType::datetime:
      return "date-time " + quote_text(node.text);
    case NodeType::array:
      return "an array";
    case NodeType::table:
      return "a table";
  }
  return "a value";
}

void merge_into(Node& base, const Node& over) {
  // Lookups by name are linear; a large table (env.set, backend settings) gets an index so a
  // merge stays linear too.
  const bool indexed = base.entries.size() > 16 && over.entries.size() > 16;
  std::unordered_map<std::string, std::size_t> index;
  if (indexed)
    for (std::size_t i = 0; i < base.entries.size(); ++i) index.emplace(base.entries[i].key, i);
  for (const auto& entry : over.entries) {
    NodeEntry* existing = nullptr;
    if (indexed) {
      auto it = index.find(entry.key);
      if (it != index.end()) existing = &base.entries[it->second];
    } else {
      for (auto& e : base.entries)
        if (e.key == entry.key) existing = &e;
    }
    if (!existing) {
      if (indexed) index.emplace(entry.key, base.entries.size());
      base.entries.push_back(entry);
    } else if (existing->value.is_table() && entry.value.is_table()) {
      existing->key_mark = entry.key_mark;
      existing->value.mark = entry.value.mark;  // the last file to write the table
      merge_into(existing->value, entry.value);
    } else {
      existing->key_mark = entry.key_mark;
      existing->value = entry.value;
    }
  }
}

}  // namespace cordon::detail
