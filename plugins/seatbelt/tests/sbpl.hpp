// The subset of Seatbelt's profile language (SBPL) that cordon emits, read back by the tests:
// a parser of the S-expressions, a checker of what the subset allows, and an evaluator that
// answers "allow or deny?" for one operation on one object. No macOS needed.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::seatbelt::test {

/// One S-expression of a profile.
struct SExpr {
  enum class Kind { list, symbol, string, number } kind = Kind::list;
  std::string text;          ///< symbol name, string contents (escapes decoded) or number text
  std::vector<SExpr> items;  ///< a list's elements
  int line = 1, column = 1;  ///< where it starts
};

/// Parses a whole profile: a sequence of top-level lists (comments `; …` to end of line are
/// skipped). Throws std::runtime_error "LINE:COL: what" for unbalanced parentheses, an
/// unterminated string, a bad escape, or a top-level atom.
std::vector<SExpr> parse_sbpl(std::string_view text);

/// What is wrong with a profile, one line each ("LINE:COL: …"); empty when it is fine.
/// `params` are the values the profile's `(param "NAME")` stand for: each one named must be
/// there, and be an absolute path.
std::vector<std::string> check_profile(const std::vector<SExpr>& profile,
                                       const std::map<std::string, std::string>& params);

enum class Verdict { allow, deny };

/// The profile's decision for `operation` on `object`: a path for file operations and
/// process-exec, "host:port" for network operations, "" for operations that take no object.
/// The last matching rule wins; the default rule decides when none matches. Throws
/// std::invalid_argument for a wildcard or unknown `operation`, std::runtime_error
/// ("LINE:COL: …") for a profile without a default rule or with a form it cannot evaluate.
Verdict evaluate(const std::vector<SExpr>& profile,
                 const std::map<std::string, std::string>& params, std::string_view operation,
                 std::string_view object);

}  // namespace cordon::seatbelt::test
