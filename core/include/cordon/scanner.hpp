// The code scanner: flags risky patterns in a script before it runs. It warns only — the
// sandbox is the boundary, and a clean scan proves nothing. Pure.
#pragma once

#include <cordon/sdk/export.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace cordon {

/// Languages the scanner knows; `automatic` picks one from the name and the shebang.
enum class ScanLanguage { automatic, python, bash };

/// How much a finding matters.
enum class Severity { low, medium, high, critical };

/// One risky pattern found.
struct Finding {
  std::string rule;  ///< stable id, e.g. "bash.curl-pipe-shell"
  Severity severity = Severity::low;
  int line = 0;       ///< 1-based
  int column = 0;     ///< 1-based
  std::string match;  ///< the matched text (at most 120 bytes)
  std::string why;    ///< one line
};

/// All findings of one scan, in line order, and a summary.
struct CORDON_API ScanReport {
  ScanLanguage language = ScanLanguage::automatic;  ///< the language actually used
  std::vector<Finding> findings;
  int count(Severity s) const;
  bool has_critical() const { return count(Severity::critical) > 0; }
};

/// What a scan looks for beyond its own rules, from a policy.
struct ScanPolicy {
  /// process.blocked_imports: each Python import of one of these modules (or a submodule) is
  /// a finding "python.blocked-import" — the report of an advisory key no kernel enforces.
  std::vector<std::string> blocked_imports;
};

/// Scans `text`; `name` (a file name, may be empty) helps the automatic choice of language.
/// Lines longer than 8 KiB are scanned in their first 8 KiB only.
CORDON_API ScanReport scan_code(std::string_view text, ScanLanguage language,
                                std::string_view name = {}, const ScanPolicy& policy = {});

CORDON_API const char* to_string(Severity s);
CORDON_API const char* to_string(ScanLanguage l);

/// The report as JSON: {language, findings:[...], summary:{low,medium,high,critical,total,
/// has_critical}}.
CORDON_API std::string scan_report_json(const ScanReport& report);

}  // namespace cordon
