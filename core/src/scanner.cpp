// The code scanner: language choice, comment stripping, rule matching, JSON report.
#include <cordon/scanner.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <regex>

#include "scanner_rules.hpp"

namespace cordon {

namespace {

constexpr std::size_t kMaxLine = 8192;
constexpr std::size_t kMaxMatch = 120;

struct Compiled {
  const detail::ScanRule* rule;
  std::regex re;
};

std::vector<Compiled> compile(const std::vector<detail::ScanRule>& a,
                              const std::vector<detail::ScanRule>& b) {
  std::vector<Compiled> out;
  for (const auto* list : {&a, &b})
    for (const auto& r : *list) out.push_back({&r, std::regex(r.pattern, std::regex::ECMAScript)});
  return out;
}

const std::vector<Compiled>& rules_for(ScanLanguage l) {
  static const auto python = compile(detail::python_rules(), detail::common_rules());
  static const auto bash = compile(detail::bash_rules(), detail::common_rules());
  return l == ScanLanguage::python ? python : bash;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

ScanLanguage detect(std::string_view text, std::string_view name) {
  if (ends_with(name, ".py") || ends_with(name, ".pyw")) return ScanLanguage::python;
  if (ends_with(name, ".sh") || ends_with(name, ".bash")) return ScanLanguage::bash;
  auto first = text.substr(0, text.find('\n'));
  if (first.rfind("#!", 0) == 0)
    return first.find("python") != std::string_view::npos ? ScanLanguage::python
                                                          : ScanLanguage::bash;
  for (auto hint : {"import ", "def ", "print(", "from "})
    if (text.find(hint) != std::string_view::npos) return ScanLanguage::python;
  return ScanLanguage::bash;
}

// The line without its `#` comment (quotes respected). In shell `#` starts a comment only at
// the start of a word, so `$#` and `a#b` stay.
std::string_view strip_comment(std::string_view line, ScanLanguage lang) {
  char quote = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quote) {
      if (c == '\\' && quote != '\'')
        ++i;
      else if (c == quote)
        quote = 0;
      continue;
    }
    if (c == '\'' || c == '"') quote = c;
    bool word_start = lang == ScanLanguage::python || i == 0 || line[i - 1] == ' ' ||
                      line[i - 1] == '\t' || line[i - 1] == ';';
    if (c == '#' && word_start) return line.substr(0, i);
  }
  return line;
}

// At most kMaxMatch bytes, never cutting a UTF-8 sequence.
std::string clip(std::string s) {
  if (s.size() <= kMaxMatch) return s;
  std::size_t n = kMaxMatch;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}

void scan_line(std::string_view line, int number, const std::vector<Compiled>& rules,
               std::vector<Finding>& out) {
  std::string text(line.substr(0, kMaxLine));
  for (const auto& c : rules) {
    std::smatch m;
    if (!std::regex_search(text, m, c.re)) continue;
    out.push_back({c.rule->id, c.rule->severity, number, static_cast<int>(m.position(0)) + 1,
                   clip(m.str(0)), c.rule->why});
  }
}

}  // namespace

int ScanReport::count(Severity s) const {
  return static_cast<int>(
      std::count_if(findings.begin(), findings.end(), [s](auto& f) { return f.severity == s; }));
}

ScanReport scan_code(std::string_view text, ScanLanguage language, std::string_view name,
                     const ScanPolicy& policy) {
  ScanReport report;
  report.language = language == ScanLanguage::automatic ? detect(text, name) : language;
  const auto& rules = rules_for(report.language);
  int number = 0;
  while (!text.empty()) {
    auto nl = text.find('\n');
    auto line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    auto code = strip_comment(line, report.language);
    scan_line(code, ++number, rules, report.findings);
    if (report.language == ScanLanguage::python)
      detail::find_blocked_imports(code.substr(0, kMaxLine), number, policy.blocked_imports,
                                   report.findings);
  }
  return report;
}

const char* to_string(Severity s) {
  switch (s) {
    case Severity::low:
      return "low";
    case Severity::medium:
      return "medium";
    case Severity::high:
      return "high";
    case Severity::critical:
      return "critical";
  }
  return "low";
}

const char* to_string(ScanLanguage l) {
  switch (l) {
    case ScanLanguage::python:
      return "python";
    case ScanLanguage::bash:
      return "bash";
    case ScanLanguage::automatic:
      return "auto";
  }
  return "auto";
}

std::string scan_report_json(const ScanReport& r) {
  boost::json::array findings;
  for (const auto& f : r.findings)
    findings.push_back({{"rule", f.rule},
                        {"severity", to_string(f.severity)},
                        {"line", f.line},
                        {"column", f.column},
                        {"match", f.match},
                        {"why", f.why}});
  boost::json::object summary{
      {"low", r.count(Severity::low)},   {"medium", r.count(Severity::medium)},
      {"high", r.count(Severity::high)}, {"critical", r.count(Severity::critical)},
      {"total", r.findings.size()},      {"has_critical", r.has_critical()}};
  boost::json::object out{{"language", to_string(r.language)},
                          {"findings", std::move(findings)},
                          {"summary", std::move(summary)}};
  return boost::json::serialize(out);
}

}  // namespace cordon
