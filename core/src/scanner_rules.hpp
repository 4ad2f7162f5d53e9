// The scanner's rule tables (internal).
#pragma once

#include <cordon/scanner.hpp>
#include <cordon/sdk/export.hpp>

#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::detail {

/// One pattern: compiled once, matched per line.
struct ScanRule {
  const char* id;
  Severity severity;
  const char* pattern;  ///< ECMAScript regex
  const char* why;
};

/// Rules for Python sources.
CORDON_API const std::vector<ScanRule>& python_rules();
/// Rules for POSIX shell / bash scripts.
CORDON_API const std::vector<ScanRule>& bash_rules();
/// Rules for either language (credential paths).
CORDON_API const std::vector<ScanRule>& common_rules();

/// Adds a "python.blocked-import" finding for each module `line` (Python, without its
/// comment) imports that `blocked` lists, by name or as a parent package.
void find_blocked_imports(std::string_view line, int number,
                          const std::vector<std::string>& blocked, std::vector<Finding>& out);

}  // namespace cordon::detail
