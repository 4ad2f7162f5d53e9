// YAML (yaml-cpp's event parser) to the policy tree. The tree is built from parser events rather
// than through YAML::Node because yaml-cpp 0.7 accepts duplicate keys, hangs in LoadAll on a
// stray ',' and shares aliased nodes; here duplicates are refused, documents are counted with a
// bound, aliases and `<<` merge keys are expanded, and the expansion is capped (an alias bomb
// stays small).
#include "policy_parse.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <sstream>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace cordon::detail {

namespace {

// Size and depth of a tree, to bound what an alias expands to before copying it.
struct Extent {
  std::size_t nodes = 0;
  int depth = 0;
};

Extent extent_of(const Node& n) {
  Extent out{1, 1};
  auto add = [&out](const Node& child) {
    Extent e = extent_of(child);
    out.nodes += e.nodes;
    out.depth = std::max(out.depth, e.depth + 1);
  };
  for (const auto& item : n.items) add(item);
  for (const auto& entry : n.entries) add(entry.value);
  return out;
}

class TreeBuilder : public YAML::EventHandler {
 public:
  explicit TreeBuilder(std::shared_ptr<const std::string> file) : file_(std::move(file)) {}

  Node take_root() { return root_ ? std::move(*root_) : make_table(); }

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& m, YAML::anchor_t anchor) override {
    if (expecting_key()) reject_key(m);
    Node n;
    n.mark = mark(m);
    finish(std::move(n), anchor);
  }

  void OnAlias(const YAML::Mark& m, YAML::anchor_t anchor) override {
    if (expecting_key()) reject_key(m);
    auto it = anchors_.find(anchor);
    if (it == anchors_.end())  // the anchored node is still open: it would contain itself
      too_big(mark(m), "an alias refers to the node that contains it");
    const auto& [node, extent] = it->second;
    count_ += extent.nodes;
    if (count_ > kMaxNodes || static_cast<int>(stack_.size()) + extent.depth > kMaxNesting)
      too_big(mark(m), "yaml aliases expand to more than " + std::to_string(kMaxNodes) +
                           " values or deeper than " + std::to_string(kMaxNesting) + " levels");
    place(node);
  }

  void OnScalar(const YAML::Mark& m, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    if (expecting_key()) {
      Frame& f = stack_.back();
      f.key = value;
      f.key_mark = mark(m);
      f.key_is_merge = value == "<<" && tag == "?";
      f.has_key = true;
      if (anchor != YAML::NullAnchor) anchors_[anchor] = {make_string(value, f.key_mark), {1, 1}};
      return;
    }
    finish(resolve_yaml_scalar(tag, value, mark(m)), anchor);
  }

  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(make_array(mark(m)), anchor, m);
  }
  void OnSequenceEnd() override { close(); }

  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(make_table(mark(m)), anchor, m);
  }
  void OnMapEnd() override {
    apply_merges(stack_.back());
    close();
  }

 private:
  struct Frame {
    Node node;
    YAML::anchor_t anchor = YAML::NullAnchor;
    bool has_key = false;  // a table's key was read, its value is next
    bool key_is_merge = false;
    std::string key;
    Mark key_mark;
    std::unordered_set<std::string> seen;  // keys written in the table itself
    std::vector<Node> merges;              // values of `<<`, applied when the table ends
  };

  Mark mark(const YAML::Mark& m) const {
    if (m.is_null()) return Mark{file_, 0, 0};
    return Mark{file_, m.line + 1, m.column + 1};
  }

  bool expecting_key() const {
    return !stack_.empty() && stack_.back().node.is_table() && !stack_.back().has_key;
  }

  [[noreturn]] void reject_key(const YAML::Mark& m) const {
    throw Error(code::kWrongType, "a key must be a plain string", "", mark(m).location());
  }

  [[noreturn]] static void too_big(const Mark& where, const std::string& what) {
    throw Error(code::kInputRejected, what, "yaml aliases are expanded; an alias bomb is refused",
                where.location());
  }

  void open(Node node, YAML::anchor_t anchor, const YAML::Mark& m) {
    if (expecting_key()) reject_key(m);
    if (++count_ > kMaxNodes || static_cast<int>(stack_.size()) >= kMaxNesting)
      too_big(node.mark, "policy has more than " + std::to_string(kMaxNodes) +
                             " values or nests deeper than " + std::to_string(kMaxNesting) +
                             " levels");
    Frame frame;
    frame.node = std::move(node);
    frame.anchor = anchor;
    stack_.push_back(std::move(frame));
  }

  void close() {
    Frame f = std::move(stack_.back());
    stack_.pop_back();
    finish(std::move(f.node), f.anchor);
  }

  // A complete value: remembered under its anchor, then placed in its parent.
  void finish(Node node, YAML::anchor_t anchor) {
    if (node.type != NodeType::table && node.type != NodeType::array && ++count_ > kMaxNodes)
      too_big(node.mark, "policy has more than " + std::to_string(kMaxNodes) + " values");
    if (anchor != YAML::NullAnchor) {
      // The kept copy counts too, or nested anchors could hold many copies of one large tree.
      Extent extent = extent_of(node);
      count_ += extent.nodes;
      if (count_ > kMaxNodes)
        too_big(node.mark, "policy has more than " + std::to_string(kMaxNodes) + " values");
      anchors_[anchor] = {node, extent};
    }
    place(std::move(node));
  }

  void place(Node node) {
    if (stack_.empty()) {
      root_ = std::move(node);
      return;
    }
    Frame& f = stack_.back();
    if (f.node.is_array()) {
      f.node.items.push_back(std::move(node));
      return;
    }
    f.has_key = false;
    if (f.key_is_merge) {
      f.merges.push_back(std::move(node));
    } else if (!f.seen.insert(f.key).second) {
      throw Error(code::kDuplicateKey, "duplicate key '" + f.key + "'",
                  "each key may appear once in a mapping; remove one of them",
                  f.key_mark.location());
    } else {
      f.node.entries.push_back(NodeEntry{std::move(f.key), std::move(f.key_mark), std::move(node)});
    }
  }

  // `<<: *base` or `<<: [*a, *b]`: keys not written in the table itself come from the merged
  // tables, earlier ones first.
  static void apply_merges(Frame& f) {
    std::vector<const Node*> sources;
    for (const auto& m : f.merges) {
      if (m.is_array()) {
        for (const auto& item : m.items) sources.push_back(&item);
      } else {
        sources.push_back(&m);
      }
    }
    for (const Node* source : sources) {
      if (!source->is_table())
        throw Error(code::kWrongType, "a '<<' merge key takes a mapping or a list of mappings", "",
                    source->mark.location());
      for (const auto& entry : source->entries)
        if (f.seen.insert(entry.key).second) f.node.entries.push_back(entry);
    }
  }

  std::shared_ptr<const std::string> file_;
  std::vector<Frame> stack_;
  std::optional<Node> root_;
  std::unordered_map<YAML::anchor_t, std::pair<Node, Extent>> anchors_;
  std::size_t count_ = 0;
};

// Receives the events of any document after the first, to learn that there is one.
class Ignore : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// The tab in the indentation of line `line` (1-based) of `text`, or of the line before it:
// YAML indents with spaces only, and a tab there makes yaml-cpp report something else at or
// just after it ("illegal map value" at the colon). Its line and column, 1-based; 0 for none.
std::pair<int, int> indentation_tab(std::string_view text, int line) {
  std::pair<int, int> found{0, 0};
  int number = 1;
  for (std::size_t start = 0; start <= text.size() && number <= line; ++number) {
    std::size_t end = std::min(text.find('\n', start), text.size());
    std::string_view row = text.substr(start, end - start);
    std::size_t indent = row.find_first_not_of(" \t");
    std::size_t tab = row.substr(0, indent).find('\t');
    if (number >= line - 1 && indent != std::string_view::npos && tab != std::string_view::npos)
      found = {number, static_cast<int>(tab) + 1};
    start = end + 1;
  }
  return found;
}

Location location_of(const YAML::Mark& m, const std::string& file) {
  if (m.is_null()) return Location{file};
  return Location{file, m.line + 1, m.column + 1};
}

}  // namespace

Node parse_yaml(std::string_view text, const std::shared_ptr<const std::string>& file) {
  std::istringstream stream{std::string(text)};
  TreeBuilder builder(file);
  try {
    YAML::Parser parser(stream);
    const bool any = parser.HandleNextDocument(builder);
    Ignore ignore;
    // One more document at most is looked at: LoadAll's unbounded loop never ends on some input.
    if (any && parser.HandleNextDocument(ignore))
      throw Error(code::kSyntax, "more than one yaml document", "a policy is one document",
                  Location{*file});
  } catch (const YAML::Exception& e) {
    if (auto [line, column] = indentation_tab(text, e.mark.is_null() ? 0 : e.mark.line + 1); line)
      throw Error(code::kSyntax, "invalid yaml: a tab in the indentation",
                  "yaml indents with spaces only; replace the tab with spaces",
                  Location{*file, line, column});
    throw Error(code::kSyntax, "invalid yaml: " + e.msg, "check the yaml syntax at this position",
                location_of(e.mark, *file));
  }
  Node root = builder.take_root();
  if (root.type == NodeType::null) root = make_table();
  root.mark = Mark{file, 1, 1};
  return root;
}

}  // namespace cordon::detail
