// TOML (toml++) to the policy tree.
#include "policy_parse.hpp"

#include "toml.hpp"

#include <algorithm>
#include <sstream>

namespace cordon::detail {

namespace {

class TomlConverter {
 public:
  explicit TomlConverter(std::shared_ptr<const std::string> file) : file_(std::move(file)) {}

  Node table(const toml::table& tbl, int depth) {
    Node out = make_table(mark(tbl.source()));
    for (auto&& [key, value] : tbl)
      out.entries.push_back(
          NodeEntry{std::string(key.str()), mark(key.source()), convert(value, depth + 1)});
    // toml++ keeps a table sorted by key; the file's order makes errors read top to bottom.
    std::stable_sort(out.entries.begin(), out.entries.end(), [](const auto& a, const auto& b) {
      return std::pair(a.key_mark.line, a.key_mark.column) <
             std::pair(b.key_mark.line, b.key_mark.column);
    });
    return out;
  }

 private:
  Mark mark(const toml::source_region& region) const {
    return Mark{file_, static_cast<int>(region.begin.line), static_cast<int>(region.begin.column)};
  }

  Node convert(const toml::node& node, int depth) {
    Mark where = mark(node.source());
    // toml++ caps nesting itself; the count keeps a huge flat file from a huge tree.
    if (++count_ > kMaxNodes || depth > kMaxNesting)
      throw Error(code::kInputRejected,
                  "policy has more than " + std::to_string(kMaxNodes) +
                      " values or nests deeper than " + std::to_string(kMaxNesting) + " levels",
                  "a policy is a short file; is this the right file?", where.location());
    if (auto* t = node.as_table()) return table(*t, depth);
    if (auto* a = node.as_array()) {
      Node out = make_array(where);
      out.items.reserve(a->size());
      for (const auto& item : *a) out.items.push_back(convert(item, depth + 1));
      return out;
    }
    if (auto* s = node.as_string()) return make_string(s->get(), where);
    if (auto* i = node.as_integer()) return make_integer(i->get(), where);
    if (auto* b = node.as_boolean()) return make_bool(b->get(), where);
    if (auto* f = node.as_floating_point()) {
      Node out;
      out.type = NodeType::floating;
      out.floating = f->get();
      out.mark = where;
      return out;
    }
    Node out;  // date, time, date-time: kept as text so a message can show them
    out.type = NodeType::datetime;
    std::ostringstream text;
    node.visit([&text](auto&& v) { text << v; });
    out.text = text.str();
    out.mark = where;
    return out;
  }

  std::shared_ptr<const std::string> file_;
  std::size_t count_ = 0;
};

// toml++ says "Error while parsing key-value pair: cannot redefine existing integer 'x'";
// cordon's messages are lowercase and lead with what went wrong.
std::string describe_parse_error(std::string_view description) {
  std::string text(description);
  if (text.rfind("Error while parsing ", 0) == 0) {
    auto colon = text.find(": ");
    if (colon != std::string::npos) text = text.substr(colon + 2);
  }
  if (!text.empty() && text[0] >= 'A' && text[0] <= 'Z') text[0] = static_cast<char>(text[0] + 32);
  return text;
}

}  // namespace

Node parse_toml(std::string_view text, const std::shared_ptr<const std::string>& file) {
  toml::table root;
  try {
    root = toml::parse(text);
  } catch (const toml::parse_error& e) {
    const auto& begin = e.source().begin;
    Location where{*file, static_cast<int>(begin.line), static_cast<int>(begin.column)};
    std::string message = describe_parse_error(e.description());
    if (message.find("cannot redefine existing") != std::string::npos)
      throw Error(code::kDuplicateKey, "duplicate key: " + message,
                  "each key and table may be defined once; merge the two definitions", where);
    throw Error(code::kSyntax, "invalid toml: " + message, "check the toml syntax at this position",
                where);
  }
  TomlConverter converter(file);
  Node out = converter.table(root, 0);
  out.mark = Mark{file, 1, 1};
  return out;
}

}  // namespace cordon::detail
