// The scanner's report of a policy's blocked_imports: which lines of a Python script import a
// module the policy names. Advisory, like every finding: nothing stops the import at run time.
#include "scanner_rules.hpp"

#include <algorithm>
#include <cctype>

namespace cordon::detail {

namespace {

bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::size_t skip_blanks(std::string_view s, std::size_t i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return i;
}

// The dotted name at `i` ("urllib.request"), advancing `i` past it; empty when there is none.
std::string dotted_name(std::string_view s, std::size_t& i) {
  std::size_t start = i;
  while (i < s.size() && (name_char(s[i]) || s[i] == '.')) ++i;
  return std::string(s.substr(start, i - start));
}

// True when `word` starts the statement at `i`, followed by a blank.
bool keyword_at(std::string_view s, std::size_t i, std::string_view word) {
  return s.substr(i, word.size()) == word && i + word.size() < s.size() &&
         (s[i + word.size()] == ' ' || s[i + word.size()] == '\t');
}

// The blocked entry `module` falls under ("os" covers "os.path"), or nullptr.
const std::string* blocked_by(const std::string& module, const std::vector<std::string>& blocked) {
  for (const auto& b : blocked)
    if (module == b ||
        (module.size() > b.size() && module.starts_with(b) && module[b.size()] == '.'))
      return &b;
  return nullptr;
}

// One module a statement imports, and the column (0-based) it was written at.
struct Imported {
  std::string module;
  std::size_t column;
};

// `import a.b as c, d` -> a.b, d.
void plain_import(std::string_view s, std::size_t i, std::vector<Imported>& out) {
  while (true) {
    i = skip_blanks(s, i);
    std::size_t at = i;
    std::string name = dotted_name(s, i);
    if (name.empty()) return;
    out.push_back({name, at});
    i = skip_blanks(s, i);
    if (keyword_at(s, i, "as")) {
      i = skip_blanks(s, i + 2);
      dotted_name(s, i);
      i = skip_blanks(s, i);
    }
    if (i >= s.size() || s[i] != ',') return;
    ++i;
  }
}

// `from a.b import x, y` -> a.b, a.b.x, a.b.y (a blocked "os.path" covers `from os import path`).
void from_import(std::string_view s, std::size_t i, std::vector<Imported>& out) {
  i = skip_blanks(s, i);
  std::size_t at = i;
  std::string base = dotted_name(s, i);
  if (base.empty() || base[0] == '.') return;  // relative: the script's own package
  out.push_back({base, at});
  i = skip_blanks(s, i);
  if (!keyword_at(s, i, "import")) return;
  i += 6;
  while (i < s.size()) {
    i = skip_blanks(s, i);
    if (i < s.size() && s[i] == '(') i = skip_blanks(s, i + 1);
    std::size_t name_at = i;
    std::string name = dotted_name(s, i);
    if (name.empty()) return;
    out.push_back({base + "." + name, name_at});
    while (i < s.size() && s[i] != ',') ++i;
    if (i < s.size()) ++i;
  }
}

// `__import__("m")` and `importlib.import_module("m")`, anywhere in the line.
void dynamic_imports(std::string_view s, std::vector<Imported>& out) {
  for (std::string_view call : {"__import__(", "import_module("}) {
    for (std::size_t at = s.find(call); at != std::string_view::npos; at = s.find(call, at + 1)) {
      if (at > 0 && name_char(s[at - 1])) continue;
      std::size_t i = skip_blanks(s, at + call.size());
      if (i >= s.size() || (s[i] != '"' && s[i] != '\'')) continue;
      char quote = s[i++];
      std::size_t end = s.find(quote, i);
      if (end != std::string_view::npos) out.push_back({std::string(s.substr(i, end - i)), at});
    }
  }
}

// The statements of a line, split at ';' (imports hold no string with one).
std::vector<std::pair<std::string_view, std::size_t>> statements(std::string_view line) {
  std::vector<std::pair<std::string_view, std::size_t>> out;
  std::size_t start = 0;
  while (start <= line.size()) {
    std::size_t end = std::min(line.find(';', start), line.size());
    out.emplace_back(line.substr(start, end - start), start);
    start = end + 1;
  }
  return out;
}

}  // namespace

void find_blocked_imports(std::string_view line, int number,
                          const std::vector<std::string>& blocked, std::vector<Finding>& out) {
  if (blocked.empty()) return;
  std::vector<Imported> found;
  for (const auto& [stmt, offset] : statements(line)) {
    std::vector<Imported> here;
    std::size_t i = skip_blanks(stmt, 0);
    if (keyword_at(stmt, i, "import")) plain_import(stmt, i + 6, here);
    if (keyword_at(stmt, i, "from")) from_import(stmt, i + 4, here);
    for (auto& h : here) found.push_back({std::move(h.module), h.column + offset});
  }
  dynamic_imports(line, found);
  for (const auto& f : found) {
    const std::string* entry = blocked_by(f.module, blocked);
    if (!entry) continue;
    out.push_back(
        {"python.blocked-import", Severity::high, number, static_cast<int>(f.column) + 1, f.module,
         "imports '" + f.module + "', which the policy's process.blocked_imports lists ('" +
             *entry + "'); advisory: the sandbox does not stop the import"});
  }
}

}  // namespace cordon::detail
