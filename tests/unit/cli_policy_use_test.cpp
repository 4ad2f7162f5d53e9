// What a new user of the `cordon` command meets first: preset names wherever a policy goes, a
// timeout that only tightens, shell syntax named as such, `policy check` warnings, and the
// advisory blocked_imports. Runs the real binary with the fixture backend (executes nothing).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <boost/json/parse.hpp>
#include <filesystem>
#include <fstream>

#include "runtime_test_support.hpp"

using cordon::test::capture;
using cordon::test::fixture_dir;
using cordon::test::has;

namespace {

const std::string kCli = CORDON_CLI;

std::string good() { return " --plugin-dir '" + fixture_dir("good").string() + "' "; }

// A scratch directory with files in it, removed at the end.
struct Dir {
  std::filesystem::path path;
  Dir() {
    char tmpl[] = "/tmp/cordon-cli-use-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~Dir() { std::filesystem::remove_all(path); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
    return (path / name).string();
  }
};

bool reports(const std::string& json, const std::string& capability) {
  const auto result = boost::json::parse(json);
  for (const auto& e : result.at("report").as_array())
    if (e.at("capability").as_string() == capability) return true;
  return false;
}

}  // namespace

TEST_CASE("cli policy use: a preset name is accepted wherever a policy goes",
          "[cli][policy][refs]") {
  auto run = capture(kCli + " run --json --backend good --policy strict" + good() + "-- hi");
  REQUIRE(run.status == 0);
  CHECK(reports(run.out, "proc.no_subprocess"));  // strict's, which standard does not ask
  auto request = capture(
      "echo '{\"argv\": [\"hi\"], \"policy\": \"strict\", \"backend\": "
      "\"good\"}' | " +
      kCli + " run --json --request -" + good());
  REQUIRE(request.status == 0);
  CHECK(reports(request.out, "proc.no_subprocess"));
  auto explain = capture(kCli + " explain --json --backend good --policy strict" + good());
  CHECK(explain.status == 0);
  CHECK(boost::json::parse(explain.out).at("policy").as_string() == "strict");
  Dir dir;
  dir.write("a.txt", "x");
  auto fs = capture(kCli + " fs list --policy strict --workspace " + dir.path.string() + " .");
  CHECK(fs.status == 0);
  CHECK(has(fs.out, "a.txt"));
  auto job = capture(kCli + " job start --state-dir " + dir.path.string() +
                     "/jobs --backend good --policy strict" + good() + "-- hi");
  REQUIRE(job.status == 0);
  std::string id = job.out.substr(0, job.out.find('\n'));
  auto waited = capture(kCli + " job wait " + id + " --state-dir " + dir.path.string() + "/jobs");
  CHECK(waited.status == 0);
  CHECK(capture(kCli + " policy check strict").status == 0);
}

TEST_CASE("cli policy use: an unknown preset name is CRD2007 with the presets, in every verb",
          "[cli][policy][refs]") {
  for (std::string verb : {"run --policy strcit -- true", "explain --policy strcit",
                           "job start --policy strcit -- true", "fs list --policy strcit .",
                           "policy check strcit", "scan --policy strcit /dev/null"}) {
    INFO(verb);
    auto r = capture(kCli + " " + verb + " 2>&1");
    CHECK(r.status != 0);
    CHECK(has(r.out, "error[CRD2007]: unknown preset 'strcit' (did you mean 'strict'?)"));
    CHECK(has(r.out, "hint: presets: minimal, standard, generous, strict, permissive"));
  }
  auto request = capture("echo '{\"argv\": [\"hi\"], \"policy\": \"strcit\"}' | " + kCli +
                         " run --json --request -");
  CHECK(request.status == 125);
  CHECK(boost::json::parse(request.out).at("error").at("code").as_string() == "CRD2007");
}

TEST_CASE("cli policy use: a timeout shortens the policy's, a longer one is refused",
          "[cli][timeout]") {
  const std::string strict = " --backend good --policy strict" + good();
  auto shorter = capture(kCli + " run --timeout 10s" + strict + "-- hi");
  CHECK(shorter.status == 0);
  CHECK(has(shorter.out, "deadline: yes"));
  auto longer = capture(kCli + " run --timeout 40s" + strict + "-- hi 2>&1");
  CHECK(longer.status == 125);
  CHECK(has(longer.out,
            "error[CRD4007]: --timeout '40s' is longer than limits.timeout (30s) of "
            "policy 'strict'"));
  CHECK_FALSE(has(longer.out, "argv: hi"));
  auto req = [&](const std::string& timeout) {
    return capture(
        "echo '{\"argv\": [\"hi\"], \"policy\": \"strict\", \"backend\": \"good\", "
        "\"timeout\": \"" +
        timeout + "\"}' | " + kCli + " run --json --request -" + good());
  };
  CHECK(req("10s").status == 0);
  auto refused = req("40s");
  CHECK(refused.status == 125);
  auto error = boost::json::parse(refused.out).at("error");
  CHECK(error.at("code").as_string() == "CRD4006");
  CHECK(has(std::string(error.at("message").as_string()), "request /timeout '40s' is longer"));
  auto explain = capture(kCli + " explain --timeout 40s" + strict + "2>&1");
  CHECK(explain.status == 125);
  CHECK(has(explain.out, "error[CRD4007]"));
}

TEST_CASE("cli policy use: a leading assignment under shell = off is CRD4001", "[cli][shell]") {
  auto r = capture(kCli + " run --backend good" + good() + "--command 'FOO=1 env' 2>&1");
  CHECK(r.status == 125);
  CHECK(has(r.out, "error[CRD4001]: command string starts with the variable assignment 'FOO=...'"));
  CHECK(has(r.out, "env.set"));
  auto ok = capture(kCli + " run --backend good" + good() + "--command 'env FOO=1 printenv'");
  CHECK(ok.status == 0);
  CHECK(has(ok.out, "argv: env FOO=1 printenv"));
}

TEST_CASE("cli policy use: policy check finds what would fail at run time, and warns",
          "[cli][policy][checks]") {
  Dir dir;
  auto ports =
      dir.write("ports.toml", "version = 1\n[network]\nallow = false\nconnect_ports = [443]\n");
  auto warned = capture(kCli + " policy check " + ports + " 2>&1");
  CHECK(warned.status == 0);
  CHECK(has(warned.out, "warning[CRD2017]: " + ports + ":4:17: 'network.connect_ports'"));
  CHECK(has(warned.out, ports + ": ok (1 warning)\n"));
  auto shell = dir.write("shell.yaml",
                         "version: 1\nprocess:\n  shell: sandboxed\n  allow_subprocess: false\n");
  auto refused = capture(kCli + " policy check " + shell + " 2>&1");
  CHECK(refused.status == 2);
  CHECK(has(refused.out, "error[CRD2006]: " + shell + ":3:10: "));
  auto both = dir.write("both.toml", "version = 1\n[network]\nallow = true\nbind_ports = [0]\n");
  auto two = capture(kCli + " policy check " + both + " 2>&1");
  CHECK(has(two.out, "error[CRD2005]: " + both + ":4:15: "));
  CHECK(has(two.out, "error[CRD2006]: " + both + ":4:14: "));
}

TEST_CASE("cli policy use: blocked_imports is reported by scan, noted by run, asks nothing",
          "[cli][imports]") {
  Dir dir;
  auto policy = dir.write("imports.toml",
                          "version = 1\n[policy]\nextends = \"standard\"\n"
                          "[process]\nblocked_imports = [\"subprocess\"]\n");
  auto script = dir.write("tool.py", "import os\nimport subprocess\n");
  auto scan = capture(kCli + " scan --policy " + policy + " " + script);
  CHECK(scan.status == 0);
  CHECK(has(scan.out, script + ":2:8: high: imports 'subprocess'"));
  CHECK(has(scan.out, "[python.blocked-import]"));
  CHECK_FALSE(has(capture(kCli + " scan " + script).out, "blocked-import"));
  auto reqs = capture(kCli + " policy requirements " + policy);
  CHECK(reqs.status == 0);
  CHECK(has(reqs.out, "(none: advisory)\tprocess.blocked_imports (1 module): "));
  CHECK(reqs.out.substr(0, reqs.out.find("(none")) ==
        capture(kCli + " policy requirements standard").out);
  auto run = capture(kCli + " run --json --backend good --policy " + policy + good() + "-- hi");
  REQUIRE(run.status == 0);
  bool noted = false;
  const auto result = boost::json::parse(run.out);
  for (const auto& n : result.at("notes").as_array())
    noted = noted || has(std::string(n.as_string()), "blocked_imports (1 module) is advisory");
  CHECK(noted);
}

TEST_CASE("cli policy use: a refused named backend's hint does not point at explain itself",
          "[cli][explain]") {
  auto r = capture(kCli + " explain --backend none 2>&1");
  CHECK(r.status == 125);
  CHECK(has(r.out, "error[CRD1001]: backend 'none' cannot prove"));
  CHECK(has(r.out, "hint: cordon explain without --backend shows whether another backend"));
  auto candidates = capture(kCli + " explain 2>&1");
  CHECK_FALSE(has(candidates.out, "seatbelt"));  // not in the shipped order
}
