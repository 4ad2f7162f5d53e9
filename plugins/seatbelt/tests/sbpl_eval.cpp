// The evaluator of the SBPL subset cordon emits (sbpl.hpp), following Seatbelt's semantics for
// it: the last matching rule wins, and the filters of one rule are alternatives.
#include <algorithm>
#include <optional>
#include <stdexcept>

#include "sbpl.hpp"
#include "sbpl_forms.hpp"

namespace cordon::seatbelt::test {

namespace {

using namespace forms;

// Evaluation: which rules match one operation on one object.

const SExpr& arg(const SExpr& f, size_t i) {
  if (i >= f.items.size()) throw std::runtime_error(where(f) + "missing argument");
  return f.items[i];
}

bool operation_matches(std::string_view rule_op, std::string_view query) {
  if (rule_op == "default") return true;
  if (rule_op.ends_with('*')) return query.starts_with(rule_op.substr(0, rule_op.size() - 1));
  return rule_op == query;
}

// A known operation, or one a known wildcard stands for (process-info-pidinfo).
void check_query(std::string_view op) {
  bool known = op != "default" && !op.ends_with('*') &&
               (operations().contains(op) ||
                std::any_of(operations().begin(), operations().end(), [op](const std::string& k) {
                  return k.ends_with('*') && op.starts_with(k.substr(0, k.size() - 1) + "-");
                }));
  if (!known) throw std::invalid_argument("cannot query operation '" + std::string(op) + "'");
}

bool under(std::string_view object, std::string_view base) {
  while (base.size() > 1 && base.ends_with('/')) base.remove_suffix(1);
  if (base.empty()) return false;
  if (base == "/") return object.starts_with('/');
  return object == base ||
         (object.starts_with(base) && object.substr(base.size()).starts_with('/'));
}

bool address_matches(std::string_view pattern, std::string_view object) {
  auto [pattern_host, pattern_port] = split_address(pattern);
  auto [host, port] = split_address(object);
  return (pattern_host == "*" || pattern_host == host) &&
         (pattern_port == "*" || pattern_port == port);
}

class Evaluator {
 public:
  Evaluator(const Params& params, std::string_view operation, std::string_view object)
      : params_(params), operation_(operation), object_(object) {}

  // One of its operations names the query, and one of its filters (if any) matches the object.
  bool rule_matches(const SExpr& rule) const {
    bool named = std::any_of(rule.items.begin() + 1, rule.items.end(), [this](const SExpr& x) {
      return x.kind == Kind::symbol && operation_matches(x.text, operation_);
    });
    if (!named) return false;
    bool filtered = false;
    for (auto it = rule.items.begin() + 1; it != rule.items.end(); ++it) {
      if (it->kind != Kind::list || is_head(*it, "with")) continue;
      filtered = true;
      if (matches(*it)) return true;
    }
    return !filtered;
  }

 private:
  const Params& params_;
  std::string_view operation_, object_;

  bool matches(const SExpr& f) const {
    const std::string* name = head(f);
    if (!name) throw std::runtime_error(where(f) + "cannot evaluate a filter without a name");
    const std::string& n = *name;
    auto match = [this](const SExpr& x) { return matches(x); };
    if (n == "literal") return path(f) == object_;
    if (n == "subpath") return under(object_, path(f).value_or(""));
    if (n == "require-all") return std::all_of(f.items.begin() + 1, f.items.end(), match);
    if (n == "require-any") return std::any_of(f.items.begin() + 1, f.items.end(), match);
    if (n == "require-not") return !matches(arg(f, 1));
    if (n == "target" || n == "vnode-type") return true;
    if (n == "global-name" || n == "socket-domain") return arg(f, 1).text == object_;
    if (n == "remote" || n == "local") return address_matches(arg(f, 2).text, object_);
    throw std::runtime_error(where(f) + "cannot evaluate filter '" + n + "'");
  }

  // The path of a literal or subpath; none for an unknown parameter.
  std::optional<std::string> path(const SExpr& f) const {
    const SExpr& p = arg(f, 1);
    if (p.kind == Kind::string) return p.text;
    if (!is_head(p, "param"))
      throw std::runtime_error(where(p) + "cannot evaluate a path that is not (param \"NAME\")");
    auto value = params_.find(arg(p, 1).text);
    if (value == params_.end()) return std::nullopt;
    return value->second;
  }
};

}  // namespace

Verdict evaluate(const std::vector<SExpr>& profile,
                 const std::map<std::string, std::string>& params, std::string_view operation,
                 std::string_view object) {
  check_query(operation);
  if (std::none_of(profile.begin(), profile.end(), is_default_rule))
    throw std::runtime_error("1:1: profile has no default rule");
  Evaluator evaluator(params, operation, object);
  Verdict verdict = Verdict::deny;
  for (const SExpr& form : profile)
    if (is_rule(form) && evaluator.rule_matches(form))
      verdict = is_head(form, "allow") ? Verdict::allow : Verdict::deny;
  return verdict;
}

}  // namespace cordon::seatbelt::test
