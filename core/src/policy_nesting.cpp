// Nesting pre-scans. toml++ and yaml-cpp recurse once per nesting level, so ten thousand `[` or
// dotted-key parts overflow the stack before either reports an error. These scans read the text
// lexically (strings and comments skipped) and refuse anything nested deeper than kMaxNesting.
// They may over-estimate odd but valid text; they must never under-estimate hostile text.
#include "policy_parse.hpp"

#include <vector>

namespace cordon::detail {

namespace {

// A position in the text with its line and column, for the error message.
class Cursor {
 public:
  Cursor(std::string_view text, const std::string& name) : text_(text), name_(name) {}

  bool done() const { return pos_ >= text_.size(); }
  char peek(std::size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  void advance() {
    if (done()) return;
    if (text_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }
  int col() const { return col_; }
  void check_depth(int depth) const {
    if (depth > kMaxNesting)
      throw Error(
          code::kInputRejected, "nesting deeper than " + std::to_string(kMaxNesting) + " levels",
          "a policy is a few tables deep; flatten the structure", Location{name_, line_, col_});
  }

 private:
  std::string_view text_;
  const std::string& name_;
  std::size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
};

// TOML: depth = parts of the current [table] header + parts of the dotted key being defined at
// each level + one per open array or inline table.
class TomlScan {
 public:
  TomlScan(std::string_view text, const std::string& name) : in_(text, name) {}

  void run() {
    bool line_start = true;
    while (!in_.done()) {
      const char c = in_.peek();
      if (c == '\n') {
        if (frames_.empty()) end_statement();
        line_start = true;
        in_.advance();
      } else if (c == ' ' || c == '\t' || c == '\r') {
        in_.advance();
      } else if (c == '#') {
        while (!in_.done() && in_.peek() != '\n') in_.advance();
      } else {
        token(c, line_start);
        line_start = false;
      }
    }
  }

 private:
  struct Frame {
    char kind;      // '[' array, '{' inline table
    int key_parts;  // parts of the key being defined in an inline table
  };

  void token(char c, bool line_start) {
    if (c == '"' || c == '\'') {
      if (in_key_) key_part();
      skip_string(c);
    } else if (frames_.empty() && line_start && c == '[') {
      header();
    } else if (in_key_) {
      if (c == '=')
        in_key_ = false;
      else if (c == '.')
        add_key_parts(1);
      else
        key_part();
      in_.advance();
    } else {
      value_char(c);
      in_.advance();
    }
  }

  void value_char(char c) {
    if (c == '[' || c == '{') {
      frames_.push_back({c, 0});
      depth_ += 1;
      in_.check_depth(depth_);
      in_key_ = c == '{';
    } else if ((c == ']' || c == '}') && !frames_.empty()) {
      depth_ -= 1 + frames_.back().key_parts;
      frames_.pop_back();
    } else if (c == ',' && !frames_.empty() && frames_.back().kind == '{') {
      depth_ -= frames_.back().key_parts;
      frames_.back().key_parts = 0;
      in_key_ = true;
    }
  }

  int& current_parts() { return frames_.empty() ? top_parts_ : frames_.back().key_parts; }

  void key_part() {
    if (current_parts() == 0) add_key_parts(1);
  }

  void add_key_parts(int n) {
    current_parts() += n;
    depth_ += n;
    in_.check_depth(depth_);
  }

  void end_statement() {
    depth_ -= top_parts_;
    top_parts_ = 0;
    in_key_ = true;
  }

  void header() {
    depth_ -= header_parts_;
    header_parts_ = 0;
    in_.advance();
    if (in_.peek() == '[') {  // [[array.of.tables]] adds the array level
      header_parts_ = 1;
      depth_ += 1;
      in_.advance();
    }
    bool any = false;
    while (!in_.done() && in_.peek() != ']' && in_.peek() != '\n') {
      const char c = in_.peek();
      if (c == '"' || c == '\'') {
        skip_string(c);
      } else {
        if (c == '.') {
          ++header_parts_;
          ++depth_;
        }
        in_.advance();
      }
      if (!any) {
        any = true;
        ++header_parts_;
        ++depth_;
      }
      in_.check_depth(depth_);
    }
    in_key_ = false;
  }

  void skip_string(char quote) {
    const bool multi = in_.peek(1) == quote && in_.peek(2) == quote;
    for (int i = 0; i < (multi ? 3 : 1); ++i) in_.advance();
    while (!in_.done()) {
      const char c = in_.peek();
      if (c == '\\' && quote == '"') {
        in_.advance();
        in_.advance();
        continue;
      }
      if (c == '\n' && !multi) return;
      if (c == quote && (!multi || (in_.peek(1) == quote && in_.peek(2) == quote))) {
        for (int i = 0; i < (multi ? 3 : 1); ++i) in_.advance();
        return;
      }
      in_.advance();
    }
  }

  Cursor in_;
  std::vector<Frame> frames_;
  int header_parts_ = 0;
  int top_parts_ = 0;
  int depth_ = 0;
  bool in_key_ = true;
};

// YAML: depth = open flow collections + block levels, estimated from a stack of indentation
// columns (one per deeper indentation, one per `- `, `? ` or `: ` indicator opening a line).
class YamlScan {
 public:
  YamlScan(std::string_view text, const std::string& name) : in_(text, name) {}

  void run() {
    while (!in_.done()) line();
  }

 private:
  void line() {
    int indent = 0;
    while (in_.peek() == ' ') {
      in_.advance();
      ++indent;
    }
    const char first = in_.peek();
    const bool blank = first == '\n' || first == '\r' || first == '#' || first == '\0';
    if (block_scalar_ >= 0 && (blank || indent > block_scalar_)) return skip_line();
    block_scalar_ = -1;
    if (!blank && flow_ == 0 && quote_ == 0) block_structure(indent);
    scan_rest(indent);
  }

  void skip_line() {
    while (!in_.done() && in_.peek() != '\n') in_.advance();
    in_.advance();
  }

  static bool is_space_or_end(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\0'; }

  void block_structure(int indent) {
    if (indent == 0 && is_document_marker()) {
      indents_.clear();
      return;
    }
    while (!indents_.empty() && indents_.back() > indent) indents_.pop_back();
    if (indents_.empty() || indents_.back() < indent) indents_.push_back(indent);
    int col = indent;
    while ((in_.peek() == '-' || in_.peek() == '?' || in_.peek() == ':') &&
           is_space_or_end(in_.peek(1))) {
      in_.advance();
      ++col;
      while (in_.peek() == ' ') {
        in_.advance();
        ++col;
      }
      if (in_.peek() == '\n' || in_.done()) break;
      indents_.push_back(col);
      in_.check_depth(static_cast<int>(indents_.size()) + flow_);
    }
    in_.check_depth(static_cast<int>(indents_.size()) + flow_);
  }

  bool is_document_marker() const {
    return (in_.peek() == '-' && in_.peek(1) == '-' && in_.peek(2) == '-' &&
            is_space_or_end(in_.peek(3))) ||
           (in_.peek() == '.' && in_.peek(1) == '.' && in_.peek(2) == '.' &&
            is_space_or_end(in_.peek(3)));
  }

  static bool token_start(char prev) {
    return prev == '\0' || prev == ' ' || prev == '\t' || prev == '[' || prev == '{' ||
           prev == ',' || prev == ':';
  }

  // The rest of the line: quotes, flow brackets, comments, and a block scalar indicator.
  void scan_rest(int indent) {
    char prev = '\0';
    Word word;
    while (!in_.done() && in_.peek() != '\n') {
      const char c = in_.peek();
      if (quote_ != 0) {
        in_quote(c);
      } else if (c == '#' && token_start(prev)) {
        while (!in_.done() && in_.peek() != '\n') in_.advance();
        break;
      } else if ((c == '"' || c == '\'') && token_start(prev)) {
        quote_ = c;
        in_.advance();
      } else {
        flow_char(c, prev);
        in_.advance();
      }
      word.add(c, prev);
      prev = c;
    }
    if (flow_ == 0 && quote_ == 0 && word.is_block_indicator()) block_scalar_ = indent;
    in_.advance();
  }

  // The last space-separated token of a line and the character before it: a block scalar
  // starts with `|` or `>` (plus chomping and indentation digits) after `:`, `-`, `?` or nothing.
  struct Word {
    std::string text;
    char before = '\0';
    char last_nonspace = '\0';

    void add(char c, char prev) {
      if (c == ' ' || c == '\t') return;
      if (prev == ' ' || prev == '\t' || prev == '\0') {
        before = last_nonspace;
        text.clear();
      }
      if (text.size() < 4) text += c;
      last_nonspace = c;
    }
    bool is_block_indicator() const {
      if (text.empty() || (text[0] != '|' && text[0] != '>')) return false;
      if (!(before == '\0' || before == ':' || before == '-' || before == '?')) return false;
      for (std::size_t i = 1; i < text.size(); ++i)
        if (!(text[i] == '+' || text[i] == '-' || (text[i] >= '0' && text[i] <= '9'))) return false;
      return true;
    }
  };

  void in_quote(char c) {
    if (c == '\\' && quote_ == '"')
      in_.advance();
    else if (c == quote_)
      quote_ = 0;
    in_.advance();
  }

  void flow_char(char c, char prev) {
    if ((c == '[' || c == '{') && token_start(prev)) {
      ++flow_;
      in_.check_depth(static_cast<int>(indents_.size()) + flow_);
    } else if ((c == ']' || c == '}') && flow_ > 0) {
      --flow_;
    }
  }

  Cursor in_;
  std::vector<int> indents_;
  int flow_ = 0;
  char quote_ = 0;
  int block_scalar_ = -1;  // >= 0: lines indented deeper than this are block scalar text
};

}  // namespace

void check_toml_nesting(std::string_view text, const std::string& name) {
  TomlScan(text, name).run();
}

void check_yaml_nesting(std::string_view text, const std::string& name) {
  YamlScan(text, name).run();
}

}  // namespace cordon::detail
