// `cordon scan`: flag risky patterns in a script. It warns only; the sandbox is the boundary.
#include <cordon/policy_loader.hpp>
#include <cordon/scanner.hpp>

#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "runtime_options.hpp"
#include "verbs.hpp"

namespace cordon::cli {

namespace {

struct ScanOptions {
  std::string file;
  std::optional<std::string> policy;
  std::string language = "auto";
  bool json = false;
  std::string fail_on;  // empty: always exit 0
};

// Exit statuses of `cordon scan`.
constexpr int kScanUnreadable = 2;
constexpr int kScanFailOn = 1;

std::string read_input(const std::string& file, bool& ok) {
  ok = true;
  if (file == "-") return {std::istreambuf_iterator<char>(std::cin), {}};
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    ok = false;
    return {};
  }
  return {std::istreambuf_iterator<char>(in), {}};
}

ScanLanguage language_of(const std::string& s) {
  if (s == "python") return ScanLanguage::python;
  if (s == "bash" || s == "sh") return ScanLanguage::bash;
  return ScanLanguage::automatic;
}

void print_text(const ScanReport& r, const std::string& name) {
  for (const auto& f : r.findings)
    std::cout << name << ":" << f.line << ":" << f.column << ": " << to_string(f.severity) << ": "
              << f.why << " [" << f.rule << "]: '" << f.match << "'\n";
  std::cout << r.findings.size() << " finding" << (r.findings.size() == 1 ? "" : "s") << " ("
            << r.count(Severity::critical) << " critical, " << r.count(Severity::high) << " high, "
            << r.count(Severity::medium) << " medium, " << r.count(Severity::low) << " low) in "
            << to_string(r.language) << " code; the sandbox, not this scan, is "
            << "the boundary\n";
}

bool at_or_above(const ScanReport& r, const std::string& level) {
  int min = level == "low" ? 0 : level == "medium" ? 1 : level == "high" ? 2 : 3;
  for (const auto& f : r.findings)
    if (static_cast<int>(f.severity) >= min) return true;
  return false;
}

int run_scan(const ScanOptions& o) {
  bool ok = false;
  std::string text = read_input(o.file, ok);
  if (!ok) {
    std::cerr << "error[CRD4009]: cannot read '" << o.file << "'\n";
    return kScanUnreadable;
  }
  ScanPolicy checks;
  if (o.policy) checks.blocked_imports = load_policy(*o.policy).process.blocked_imports;
  auto report = scan_code(text, language_of(o.language), o.file == "-" ? "" : o.file, checks);
  if (o.json)
    std::cout << scan_report_json(report) << "\n";
  else
    print_text(report, o.file == "-" ? "<stdin>" : o.file);
  return !o.fail_on.empty() && at_or_above(report, o.fail_on) ? kScanFailOn : 0;
}

}  // namespace

void register_scan(CLI::App& app) {
  auto opts = std::make_shared<ScanOptions>();
  auto* s = app.add_subcommand("scan", "report risky patterns in a script (warns only)");
  s->add_option("FILE", opts->file, "the script, or - for standard input")->required();
  s->add_option("--language", opts->language, "python, bash or auto")
      ->check(CLI::IsMember({"python", "bash", "sh", "auto"}));
  s->add_option("--policy", opts->policy,
                "policy file or preset name: also report the imports its "
                "process.blocked_imports lists");
  s->add_flag("--json", opts->json, "print the report as JSON");
  s->add_option("--fail-on", opts->fail_on, "exit 1 when a finding is at least this severe")
      ->check(CLI::IsMember({"low", "medium", "high", "critical"}));
  s->callback([opts] {
    // A bad policy is reported as every verb reports one (exit 2, as for an unreadable file).
    run_verb(kScanUnreadable, [&] { return run_scan(*opts); });
  });
}

}  // namespace cordon::cli
