// Parser and checker of the SBPL subset cordon emits (sbpl.hpp). The checker is strict about the
// subset; the evaluator is in sbpl_eval.cpp.
#include "sbpl.hpp"
#include "sbpl_forms.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>
#include <stdexcept>
#include <utility>

namespace cordon::seatbelt::test {

namespace {

using namespace forms;

bool mentions_no_sandbox(const SExpr& with) {
  return std::any_of(with.items.begin(), with.items.end(),
                     [](const SExpr& x) { return is_symbol(x, "no-sandbox"); });
}

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)); }

bool is_digits(std::string_view text) {
  return !text.empty() && text.find_first_not_of("0123456789") == npos;
}

// Text to S-expressions, each with the line and column it starts at.

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  std::vector<SExpr> profile() {
    std::vector<SExpr> forms;
    for (skip_blank(); !done(); skip_blank()) {
      if (peek() == ')') fail(line_, column_, "unexpected ')'");
      SExpr form = expr();
      if (form.kind != Kind::list)
        fail(form.line, form.column, "top-level atom '" + form.text + "'");
      forms.push_back(std::move(form));
    }
    return forms;
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  int line_ = 1, column_ = 1;

  [[noreturn]] static void fail(int line, int column, const std::string& what) {
    throw std::runtime_error(where(line, column) + what);
  }

  bool done() const { return pos_ >= text_.size(); }
  char peek() const { return text_[pos_]; }

  char next() {
    char c = text_[pos_++];
    line_ += c == '\n';
    column_ = c == '\n' ? 1 : column_ + 1;
    return c;
  }

  SExpr start(Kind kind) const {
    return {.kind = kind, .text = {}, .items = {}, .line = line_, .column = column_};
  }

  // Whitespace and comments.
  void skip_blank() {
    while (!done() && (peek() == ';' || is_space(peek()))) {
      if (next() != ';') continue;
      while (!done() && peek() != '\n') next();
    }
  }

  SExpr expr() {
    if (peek() == '(') return list();
    if (peek() == '"') return string();
    return atom();
  }

  SExpr list() {
    SExpr e = start(Kind::list);
    next();
    for (skip_blank(); !done() && peek() != ')'; skip_blank()) e.items.push_back(expr());
    if (done()) fail(e.line, e.column, "unclosed parenthesis");
    next();
    return e;
  }

  SExpr string() {
    SExpr e = start(Kind::string);
    for (next(); !done() && peek() != '"';) {
      int line = line_, column = column_;
      char c = next();
      if (c == '\\' && !done()) {
        if (peek() != '"' && peek() != '\\')
          fail(line, column, std::string("bad escape '\\") + peek() + "'");
        c = next();
      }
      e.text += c;
    }
    if (done()) fail(e.line, e.column, "unterminated string");
    next();
    return e;
  }

  SExpr atom() {
    SExpr e = start(Kind::symbol);
    while (!done() && !is_space(peek()) && std::string_view("()\";").find(peek()) == npos)
      e.text += next();
    if (is_digits(e.text)) e.kind = Kind::number;
    return e;
  }
};

// The problems of a profile: all of them, not just the first.

class Checker {
 public:
  explicit Checker(const Params& params) : params_(params) {}

  std::vector<std::string> run(const std::vector<SExpr>& profile) {
    for (size_t i = 0; i < profile.size(); ++i) {
      check_form(profile[i], i);
      scan_no_sandbox(profile[i]);
    }
    const SExpr top{};  // 1:1, for an empty profile
    if (!seen_version_) report(profile.empty() ? top : profile[0], "missing (version 1)");
    if (!seen_default_)
      report(profile.size() > 1 ? profile[1] : top,
             "missing default rule: (deny default) or (allow default) comes second");
    return std::move(problems_);
  }

 private:
  const Params& params_;
  std::vector<std::string> problems_;
  bool seen_version_ = false, seen_default_ = false;

  void report(const SExpr& at, const std::string& what) { problems_.push_back(where(at) + what); }

  void check_form(const SExpr& form, size_t index) {
    const std::string* name = head(form);
    if (!name) return report(form, "expected a form (NAME ...)");
    if (*name == "version") return check_version(form, index);
    if (!is_rule(form)) return report(form, "unknown top-level form '" + *name + "'");
    if (is_default_rule(form)) check_default_rule(form, index);
    check_rule(form);
  }

  // A duplicated or misplaced form: `what` belongs at `expected`.
  void place(const SExpr& form, size_t index, size_t expected, bool& seen,
             const std::string& what) {
    if (seen || index != expected)
      report(form, seen ? "duplicated " + what
                        : what + (expected ? " must come second" : " must come first"));
    seen = true;
  }

  void check_version(const SExpr& form, size_t index) {
    place(form, index, 0, seen_version_, "(version 1)");
    if (form.items.size() != 2 || form.items[1].kind != Kind::number || form.items[1].text != "1")
      report(form, "unsupported version: expected (version 1)");
  }

  void check_default_rule(const SExpr& rule, size_t index) {
    place(rule, index, 1, seen_default_, "default rule");
    auto items = std::count_if(rule.items.begin() + 1, rule.items.end(),
                               [](const SExpr& x) { return !is_head(x, "with"); });
    if (items != 1) report(rule, "default rule takes no other operation or filter");
  }

  // Operations (symbols), then filters (lists); modifiers anywhere.
  void check_rule(const SExpr& rule) {
    bool operation = false, filter = false;
    for (auto it = rule.items.begin() + 1; it != rule.items.end(); ++it) {
      if (it->kind == Kind::symbol) {
        if (filter) report(*it, "operation '" + it->text + "' after a filter");
        if (!operations().contains(it->text)) report(*it, "unknown operation '" + it->text + "'");
        operation = true;
      } else if (is_head(*it, "with")) {
        check_modifier(*it);
      } else if (it->kind == Kind::list) {
        filter = true;
        check_filter(*it);
      } else {
        report(*it, "unexpected '" + it->text + "' in a rule");
      }
    }
    if (!operation) report(rule, "rule with no operation");
  }

  // (with no-sandbox) is reported by scan_no_sandbox, wherever it is.
  void check_modifier(const SExpr& m) {
    const auto& items = m.items;
    bool message =
        items.size() == 3 && is_symbol(items[1], "message") && items[2].kind == Kind::string;
    bool no_log = items.size() == 2 && is_symbol(items[1], "no-log");
    if (!message && !no_log && !mentions_no_sandbox(m))
      report(m, "unknown modifier: expected (with message \"...\") or (with no-log)");
  }

  void scan_no_sandbox(const SExpr& e) {
    if (is_head(e, "with") && mentions_no_sandbox(e))
      report(e, "(with no-sandbox) would run a binary unsandboxed");
    for (const SExpr& item : e.items) scan_no_sandbox(item);
  }

  void check_filter(const SExpr& f) {
    const std::string* name = head(f);
    if (!name) return report(f, "expected a filter (NAME ...)");
    const std::string& n = *name;
    if (n == "literal" || n == "subpath") return check_path(f);
    if (n == "require-all" || n == "require-any") return check_combination(f);
    if (n == "require-not") return arity(f, 1) ? check_filter(f.items[1]) : void();
    if (n == "target") return check_choice(f, {"same-sandbox", "self"});
    if (n == "global-name") return check_string(f);
    if (n == "remote" || n == "local") return check_address(f);
    if (n == "socket-domain") return check_choice(f, {"AF_UNIX", "AF_INET", "AF_INET6"});
    if (n == "vnode-type")
      return check_choice(f, {"CHARACTER-DEVICE", "BLOCK-DEVICE", "REGULAR-FILE", "DIRECTORY",
                              "SYMLINK", "SOCKET", "FIFO", "TTY"});
    if (n == "regex" || n == "prefix")
      return report(f, "'" + n + "' filter is not in the subset cordon emits");
    if (n == "with") return mentions_no_sandbox(f) ? void() : report(f, "modifier inside a filter");
    report(f, "unknown filter '" + n + "'");
  }

  bool arity(const SExpr& f, size_t n) {
    if (f.items.size() == n + 1) return true;
    report(f, "'" + f.items[0].text + "' takes " + std::to_string(n) + " argument(s)");
    return false;
  }

  void check_combination(const SExpr& f) {
    if (f.items.size() < 2) report(f, "'" + f.items[0].text + "' takes at least one filter");
    for (auto it = f.items.begin() + 1; it != f.items.end(); ++it) check_filter(*it);
  }

  void check_choice(const SExpr& f, const Names& allowed) {
    if (!arity(f, 1)) return;
    const SExpr& arg = f.items[1];
    if (arg.kind != Kind::symbol || !allowed.contains(arg.text))
      report(arg, "'" + f.items[0].text + "' does not take '" + arg.text + "'");
  }

  void check_string(const SExpr& f) {
    if (arity(f, 1) && f.items[1].kind != Kind::string)
      report(f.items[1], "'" + f.items[0].text + "' takes a string");
  }

  void check_path(const SExpr& f) {
    if (!arity(f, 1)) return;
    const SExpr& path = f.items[1];
    if (path.kind == Kind::string)
      return report(path, "path text outside parameters: \"" + path.text + "\"");
    if (!is_head(path, "param") || path.items.size() != 2 || path.items[1].kind != Kind::string)
      return report(path, "expected (param \"NAME\") as the path");
    const std::string& name = path.items[1].text;
    auto value = params_.find(name);
    if (value == params_.end())
      report(path, "unknown parameter '" + name + "'");
    else if (!value->second.starts_with('/'))
      report(path, "parameter '" + name + "' is not an absolute path: '" + value->second + "'");
  }

  void check_address(const SExpr& f) {
    if (!arity(f, 2)) return;
    const SExpr &protocol = f.items[1], &address = f.items[2];
    if (!is_symbol(protocol, "tcp") && !is_symbol(protocol, "ip"))
      report(protocol, "unknown protocol '" + protocol.text + "': expected tcp or ip");
    if (address.kind != Kind::string || address.text.find(':') == npos)
      return report(address, "expected \"HOST:PORT\", not '" + address.text + "'");
    auto [host, port] = split_address(address.text);
    if (host != "*" && host != "localhost")
      report(address, "rejected host '" + std::string(host) + "': only * or localhost");
    if (port != "*" &&
        !(is_digits(port) && port.size() <= 5 && std::stoi(std::string(port)) < 65536))
      report(address, "bad port '" + std::string(port) + "'");
  }
};

}  // namespace

std::vector<SExpr> parse_sbpl(std::string_view text) { return Parser(text).profile(); }

std::vector<std::string> check_profile(const std::vector<SExpr>& profile,
                                       const std::map<std::string, std::string>& params) {
  return Checker(params).run(profile);
}

}  // namespace cordon::seatbelt::test
