// Loader tests: each problem in a policy file is reported with its code, line and column.
#include <catch2/catch.hpp>
#include <cordon/policy_loader.hpp>

#include "policy_test_support.hpp"

using namespace cordon;
using test::text_errors;

TEST_CASE("policy_toml: unknown key is located and the nearest key suggested", "[policy][toml]") {
  auto errors = text_errors("version = 1\n[limits]\nmemry_mb = 512\n", "p.toml");
  REQUIRE(errors.size() == 1);
  CHECK_ERROR_AT(errors, "CRD2003", 3, 1);
  CHECK(std::string(errors[0].what()) ==
        "p.toml:3:1: unknown key 'memry_mb' in [limits] (did you mean 'memory_mb'?)");
  CHECK(errors[0].hint().find("max_processes") != std::string::npos);
}

TEST_CASE("policy_yaml: unknown key is located and the nearest key suggested", "[policy][yaml]") {
  auto errors = text_errors("version: 1\nlimits:\n  memry_mb: 512\n", "p.yaml");
  REQUIRE(errors.size() == 1);
  CHECK_ERROR_AT(errors, "CRD2003", 3, 3);
  CHECK(errors[0].message() == "unknown key 'memry_mb' in [limits] (did you mean 'memory_mb'?)");
}

TEST_CASE("policy_toml: unknown top-level key and key in the wrong table", "[policy][toml]") {
  auto errors =
      text_errors("version = 1\n[limit]\n[network]\ntimeout = \"5s\"\nzzz = 1\n", "p.toml");
  REQUIRE(errors.size() == 3);
  CHECK_ERROR_AT(errors, "CRD2003", 2, 2);
  CHECK(errors[0].message() == "unknown key 'limit' (did you mean 'limits'?)");
  CHECK_ERROR_AT(errors, "CRD2003", 4, 1);
  CHECK(errors[1].message() ==
        "unknown key 'timeout' in [network] (did you mean 'limits.timeout'?)");
  CHECK(errors[2].message() == "unknown key 'zzz' in [network]");
}

TEST_CASE("policy_toml: wrong types name what was expected and what was seen", "[policy][toml]") {
  auto errors = text_errors(
      "version = 1\n"
      "[limits]\n"
      "memory_mb = \"abc\"\n"
      "timeout = true\n"
      "[network]\n"
      "allow = \"no\"\n"
      "connect_ports = [443, \"80\"]\n"
      "[filesystem]\n"
      "write = 5\n",
      "p.toml");
  REQUIRE(errors.size() == 5);
  CHECK_ERROR_AT(errors, "CRD2004", 3, 13);
  CHECK(errors[0].message() ==
        "expected an integer or \"unlimited\" for 'limits.memory_mb', saw string 'abc'");
  CHECK_ERROR_AT(errors, "CRD2004", 4, 11);
  CHECK_ERROR_AT(errors, "CRD2004", 6, 9);
  CHECK(errors[2].message() == "expected true or false for 'network.allow', saw string 'no'");
  CHECK_ERROR_AT(errors, "CRD2004", 7, 23);
  CHECK_ERROR_AT(errors, "CRD2004", 9, 9);
}

TEST_CASE("policy_yaml: wrong types are located in yaml too", "[policy][yaml]") {
  auto errors = text_errors(
      "version: 1\n"
      "limits:\n"
      "  memory_mb: abc\n"
      "  max_processes: 1.5\n"
      "process:\n"
      "  blocked_commands: sudo\n"
      "limits2: {}\n",
      "p.yml");
  REQUIRE(errors.size() == 4);
  CHECK_ERROR_AT(errors, "CRD2004", 3, 14);
  CHECK_ERROR_AT(errors, "CRD2004", 4, 18);
  CHECK(errors[1].message() ==
        "expected an integer or \"unlimited\" for 'limits.max_processes', saw float 1.5");
  CHECK_ERROR_AT(errors, "CRD2004", 6, 21);
  CHECK_ERROR_AT(errors, "CRD2003", 7, 1);
}

TEST_CASE("policy_toml: impossible values are refused with their location", "[policy][toml]") {
  auto errors = text_errors(
      "version = 1\n"                                     // 1
      "[limits]\n"                                        // 2
      "memory_mb = 0\n"                                   // 3
      "max_processes = -4\n"                              // 4
      "cpu_percent = 10001\n"                             // 5
      "timeout = \"5 minutes\"\n"                         // 6
      "job_lifetime = 0\n"                                // 7
      "[network]\n"                                       // 8
      "bind_ports = [8000, 0, 70000]\n"                   // 9
      "[process]\n"                                       // 10
      "shell = \"bash\"\n"                                // 11
      "blocked_commands = [\"sudo\", \"\"]\n"             // 12
      "[filesystem]\n"                                    // 13
      "home = \"shared\"\n"                               // 14
      "blocked = [\"~root/.ssh\", \"/a/{workspace}\"]\n"  // 15
      "read = \"everything\"\n"                           // 16
      "[env]\n"                                           // 17
      "pass = [\"1BAD\"]\n"                               // 18
      "set = { \"A-B\" = \"x\" }\n",                      // 19
      "p.toml");
  CHECK(errors.size() == 15);
  CHECK_ERROR_AT(errors, "CRD2005", 3, 13);
  CHECK_ERROR_AT(errors, "CRD2005", 4, 17);
  CHECK_ERROR_AT(errors, "CRD2005", 5, 15);
  CHECK_ERROR_AT(errors, "CRD2005", 6, 11);
  CHECK_ERROR_AT(errors, "CRD2005", 7, 16);
  CHECK_ERROR_AT(errors, "CRD2005", 9, 21);
  CHECK_ERROR_AT(errors, "CRD2005", 9, 24);
  CHECK_ERROR_AT(errors, "CRD2005", 11, 9);
  CHECK_ERROR_AT(errors, "CRD2005", 12, 29);
  CHECK_ERROR_AT(errors, "CRD2005", 14, 8);
  CHECK_ERROR_AT(errors, "CRD2005", 15, 12);
  CHECK_ERROR_AT(errors, "CRD2005", 15, 26);
  CHECK_ERROR_AT(errors, "CRD2005", 16, 8);
  CHECK_ERROR_AT(errors, "CRD2005", 18, 9);
  CHECK_ERROR_AT(errors, "CRD2005", 19, 9);
  for (const auto& e : errors) CHECK(e.code() == "CRD2005");
}

TEST_CASE("policy_yaml: contradictions are refused", "[policy][yaml]") {
  auto errors = text_errors(
      "version: 1\n"
      "network:\n"
      "  allow: true\n"
      "  connect_ports: [443]\n"
      "filesystem:\n"
      "  write: ['{workspace}', '~/.ssh/keys/']\n"
      "  blocked: ['~/.ssh/']\n"
      "  read: [/usr, /home/me/secret/x/..]\n"
      "process:\n"
      "  allowed_commands: [git, sudo]\n"
      "  blocked_commands: [sudo]\n",
      "p.yaml");
  REQUIRE(errors.size() == 3);
  CHECK_ERROR_AT(errors, "CRD2006", 4, 18);
  CHECK(errors[0].message().find("'network.allow = true'") != std::string::npos);
  CHECK_ERROR_AT(errors, "CRD2006", 6, 10);
  CHECK(errors[1].message() ==
        "path '~/.ssh/keys/' is both writable ('filesystem.write') and blocked by '~/.ssh/'");
  CHECK_ERROR_AT(errors, "CRD2006", 10, 21);
}

TEST_CASE("policy: a path inside a blocked one is fine the other way round", "[policy]") {
  // Blocking a secret inside a writable workspace is the normal case, not a contradiction.
  auto p = load_policy_text(
      "version = 1\n[filesystem]\nwrite = [\"~\"]\nblocked = [\"~/.ssh\", \"/etc/shadow\"]\n"
      "read = [\"/etc\"]\n[network]\nallow = false\nconnect_ports = [443]\n",
      "p.toml");
  CHECK(p.filesystem.blocked.size() == 2);
  CHECK(p.network.connect_ports == std::vector<std::uint16_t>{443});
}

TEST_CASE("policy: version is required and must be 1", "[policy]") {
  auto missing = text_errors("[limits]\nmemory_mb = 5\n", "p.toml");
  REQUIRE(missing.size() == 1);
  CHECK_ERROR_AT(missing, "CRD2012", 1, 1);
  auto two = text_errors("version: 2\n", "p.yaml");
  REQUIRE(two.size() == 1);
  CHECK_ERROR_AT(two, "CRD2012", 1, 10);
  CHECK(two[0].message() == "unsupported policy version 2 (this cordon reads version 1)");
  auto text = text_errors("version = \"1\"\n", "p.toml");
  CHECK_ERROR_AT(text, "CRD2004", 1, 11);
  auto empty = text_errors("", "p.yaml");
  CHECK_ERROR_AT(empty, "CRD2012", 1, 1);
}

TEST_CASE("policy: the format is chosen by extension", "[policy]") {
  auto json = text_errors("{}", "p.json");
  REQUIRE(json.size() == 1);
  CHECK(json[0].code() == "CRD2011");
  CHECK(text_errors("version = 1", "policy").at(0).code() == "CRD2011");
  CHECK(load_policy_text("version: 1\n", "p.yml").version == 1);
  CHECK(load_policy_text("version: 1\n", "p.yaml").version == 1);
  CHECK(load_policy_text("version = 1\n", "p.toml").version == 1);
}

TEST_CASE("policy: syntax errors carry the parser's line and column", "[policy][toml][yaml]") {
  auto toml = text_errors("version = 1\n[limits]\nmemory_mb = \n", "p.toml");
  REQUIRE(toml.size() == 1);
  CHECK(toml[0].code() == "CRD2002");
  CHECK(toml[0].where()->line == 3);
  auto yaml = text_errors("version: 1\nlimits: [1, 2\n", "p.yaml");
  REQUIRE(yaml.size() == 1);
  CHECK(yaml[0].code() == "CRD2002");
  CHECK(yaml[0].where()->line >= 2);
  auto docs = text_errors("version: 1\n---\nversion: 1\n", "p.yaml");
  CHECK(docs.at(0).code() == "CRD2002");
}

// toml++ 3.3 asserts on a comment where a table name starts ("[#"); found by fuzz_policy_toml
// once toml++ was compiled in. It must be an error at its position, never an abort.
TEST_CASE("policy: a comment where a table name starts is a syntax error", "[policy][toml]") {
  for (const char* text : {"version = 1\n[#]\n", "version = 1\n[# x\n[policy]\n",
                           "version = 1\n[[#]]\n", "version = 1\n[a.#]\n"}) {
    INFO(text);
    auto errors = text_errors(text, "p.toml");
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].code() == "CRD2002");
    REQUIRE(errors[0].where());
    CHECK(errors[0].where()->line == 2);
  }
}

// toml++ 3.3's whitespace table reaches __builtin_unreachable for most non-ASCII characters
// (found by fuzz_policy_toml; core/src/toml.hpp replaces the function). Under UBSan (the asan
// build) the old one aborts here.
TEST_CASE("policy: non-ASCII characters where whitespace may be are syntax errors",
          "[policy][toml]") {
  for (const char* text : {"version = 1 \xc3\xa9\n", "version = 1\xc2\xa0\n", "oe \xef\xbb\xae\"\n",
                           "version = 1 \xe3\x80\x80\n"}) {
    INFO(text);
    auto errors = text_errors(text, "p.toml");
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].code() == "CRD2002");
  }
  // The same characters inside a string are content.
  CHECK(load_policy_text("version = 1\n[env.set]\nNAME = \"caf\xc3\xa9 \xe3\x80\x80\"\n", "p.toml")
            .env.set.at("NAME") == "caf\xc3\xa9 \xe3\x80\x80");
}

TEST_CASE("policy: duplicate keys are CRD2010 in both formats", "[policy][toml][yaml]") {
  auto toml_table =
      text_errors("version = 1\n[limits]\nmemory_mb = 1\n[limits]\ncpu_seconds = 2\n", "p.toml");
  REQUIRE(toml_table.size() == 1);
  CHECK_ERROR_AT(toml_table, "CRD2010", 4, 1);
  auto toml_key = text_errors("version = 1\nversion = 1\n", "p.toml");
  REQUIRE(toml_key.size() == 1);
  CHECK(toml_key[0].code() == "CRD2010");
  CHECK(toml_key[0].where()->line == 2);
  auto yaml = text_errors("version: 1\nlimits:\n  memory_mb: 1\n  memory_mb: 2\n", "p.yaml");
  REQUIRE(yaml.size() == 1);
  CHECK_ERROR_AT(yaml, "CRD2010", 4, 3);
  CHECK(yaml[0].message() == "duplicate key 'memory_mb'");
}

TEST_CASE("policy: every problem is reported, capped at 50 plus a summary", "[policy]") {
  std::string text = "version = 1\n[limits]\n";
  for (int i = 0; i < 60; ++i) text += "bogus_" + std::to_string(i) + " = 1\n";
  auto errors = text_errors(text, "p.toml");
  REQUIRE(errors.size() == kMaxReportedErrors + 1);
  CHECK_ERROR_AT(errors, "CRD2003", 3, 1);
  CHECK_ERROR_AT(errors, "CRD2003", 52, 1);
  CHECK(errors.back().code() == "CRD2013");
  CHECK(errors.back().message() == "10 more errors not shown (60 in all)");

  std::string few = "version = 1\n[limits]\n";
  for (int i = 0; i < 50; ++i) few += "bogus_" + std::to_string(i) + " = 1\n";
  CHECK(text_errors(few, "p.toml").size() == 50);
}

TEST_CASE("policy: a section that is not a table is a type error", "[policy]") {
  auto errors = text_errors("version = 1\nlimits = 5\nbackends = [1]\n", "p.toml");
  REQUIRE(errors.size() == 2);
  CHECK_ERROR_AT(errors, "CRD2004", 2, 10);
  CHECK(errors[0].message() == "expected a table for 'limits', saw integer 5");
  CHECK_ERROR_AT(errors, "CRD2004", 3, 12);
}

TEST_CASE("policy: shell accepts aliases, booleans and 0/1 in both formats", "[policy][shell]") {
  auto shell_of = [](const std::string& text, const std::string& name) {
    return load_policy_text(text, name).process.shell;
  };
  CHECK(shell_of("version = 1\n[process]\nshell = true\n", "p.toml") == ShellMode::sandboxed);
  CHECK(shell_of("version = 1\n[process]\nshell = 0\n", "p.toml") == ShellMode::off);
  CHECK(shell_of("version = 1\n[process]\nshell = \"raw\"\n", "p.toml") == ShellMode::unsafe);
  CHECK(shell_of("version: 1\nprocess:\n  shell: yes\n", "p.yaml") == ShellMode::sandboxed);
  CHECK(shell_of("version: 1\nprocess:\n  shell:\n", "p.yaml") == ShellMode::off);
  CHECK(shell_of("version: 1\nprocess:\n  shell: native\n", "p.yaml") == ShellMode::sandboxed);
  CHECK(shell_of("version: 1\nprocess:\n  shell: 1\n", "p.yaml") == ShellMode::sandboxed);
  CHECK_ERROR_AT(text_errors("version = 1\n[process]\nshell = 2\n", "p.toml"), "CRD2005", 3, 9);
}

TEST_CASE("policy: values decode into the model", "[policy]") {
  auto p = load_policy_text(
      "version = 1\n"
      "[policy]\nname = \"x\"\n"
      "[limits]\nmemory_mb = 64\ntimeout = 90\njob_lifetime = \"2h\"\ncpu_percent = 250\n"
      "[filesystem]\nread = \"host\"\nhome = \"host\"\n"
      "[network]\nconnect_ports = [443, 80]\n"
      "[process]\nallow_subprocess = false\nallowed_commands = [\"git\"]\n"
      "[env]\nset = { A = \"1\", B_2 = \"\" }\npass = [\"CI\", \"_X\"]\n"
      "[backend]\nprefer = [\"landlock\", \"docker\"]\n"
      "[backends.docker]\nimage = \"python:3.11-slim\"\nmounts = [{ ro = true }]\n",
      "p.toml");
  CHECK(p.name == "x");
  CHECK(p.limits.memory_mb == 64u);
  CHECK(p.limits.timeout == Duration(90'000));
  CHECK(p.limits.job_lifetime == Duration(7'200'000));
  CHECK(p.limits.cpu_percent == 250u);
  CHECK_FALSE(p.limits.max_processes.has_value());
  CHECK(p.filesystem.read_host);
  CHECK(p.filesystem.read.empty());
  CHECK(p.filesystem.home == HomeMode::host);
  CHECK(p.network.connect_ports == std::vector<std::uint16_t>{443, 80});
  CHECK_FALSE(p.process.allow_subprocess);
  CHECK(p.process.allowed_commands == std::vector<std::string>{"git"});
  CHECK(p.env.set == std::map<std::string, std::string>{{"A", "1"}, {"B_2", ""}});
  CHECK(p.env.pass == std::vector<std::string>{"CI", "_X"});
  CHECK(p.backend.prefer == std::vector<std::string>{"landlock", "docker"});
  REQUIRE(p.backends.contains("docker"));
  CHECK(p.backends.at("docker").at("image") == "python:3.11-slim");
  CHECK(p.backends.at("docker").at("mounts").at(0).at("ro") == true);
}

TEST_CASE("policy_yaml: anchors and merge keys are expanded", "[policy][yaml]") {
  auto p = load_policy_text(
      "version: 1\n"
      "filesystem:\n"
      "  write: &dirs ['{workspace}', /tmp]\n"
      "  read: *dirs\n"
      "backends:\n"
      "  base: &base {image: 'python:3', user: nobody}\n"
      "  docker:\n"
      "    <<: *base\n"
      "    image: 'python:3.12'\n",
      "p.yaml");
  CHECK(p.filesystem.read == std::vector<std::string>{"{workspace}", "/tmp"});
  CHECK(p.backends.at("docker").at("image") == "python:3.12");
  CHECK(p.backends.at("docker").at("user") == "nobody");
}

TEST_CASE("policy_yaml: scalars resolve by the yaml 1.2 core schema", "[policy][yaml]") {
  // Quoted numbers stay strings, "no" is a string (not YAML 1.1's false), 0x10 is an integer.
  auto p = load_policy_text(
      "version: 1\nlimits: {memory_mb: 0x10, max_processes: 0o17}\n"
      "env: {set: {A: '1', B: no, C: \"true\"}}\n",
      "p.yaml");
  CHECK(p.limits.memory_mb == 16u);
  CHECK(p.limits.max_processes == 15u);
  CHECK(p.env.set == std::map<std::string, std::string>{{"A", "1"}, {"B", "no"}, {"C", "true"}});
  auto errors = text_errors("version: 1\nenv: {set: {A: 1, B: true, C: ~}}\n", "p.yaml");
  CHECK(errors.size() == 3);
}

TEST_CASE("policy: contradictions are reported along with the other errors", "[policy]") {
  auto errors = text_errors(
      "version = 1\n[limits]\nbogus = 1\n[network]\nallow = true\nconnect_ports = [443]\n",
      "p.toml");
  REQUIRE(errors.size() == 2);
  CHECK_ERROR_AT(errors, "CRD2003", 3, 1);
  CHECK_ERROR_AT(errors, "CRD2006", 6, 17);
}

TEST_CASE("policy: writable and blocked paths compare without expanding them", "[policy]") {
  // "src/x" is "{workspace}/src/x"; "../shared" leaves the workspace, so it is not under it.
  auto errors = text_errors(
      "version = 1\n[filesystem]\nwrite = [\"src/x\", \"../shared\", \"~/a/./b\"]\n"
      "blocked = [\"{workspace}/src\", \"{workspace}/shared\", \"~/a/b/\"]\n",
      "p.toml");
  REQUIRE(errors.size() == 2);
  CHECK(errors[0].message().find("'src/x'") != std::string::npos);
  CHECK(errors[1].message().find("'~/a/./b'") != std::string::npos);
  CHECK_ERROR_AT(errors, "CRD2006", 3, 9);
}

TEST_CASE("policy: read and write take a list of paths or \"host\"", "[policy]") {
  auto p =
      load_policy_text("version = 1\n[filesystem]\nwrite = \"host\"\nread = \"host\"\n", "p.toml");
  CHECK(p.filesystem.write_host);
  CHECK(p.filesystem.write.empty());
  CHECK(p.filesystem.read_host);
  auto listed = load_policy_text("version: 1\nfilesystem: {write: [/tmp]}\n", "p.yaml");
  CHECK_FALSE(listed.filesystem.write_host);
  CHECK(listed.filesystem.write == std::vector<std::string>{"/tmp"});
  auto errors = text_errors("version = 1\n[filesystem]\nwrite = \"/tmp\"\n", "p.toml");
  REQUIRE(errors.size() == 1);
  CHECK_ERROR_AT(errors, "CRD2005", 3, 9);
  CHECK(errors[0].message() ==
        "'filesystem.write' takes a list of paths or \"host\", saw string '/tmp'");
}

TEST_CASE("policy_yaml: a backend setting without a value is refused where it is",
          "[policy][yaml]") {
  // TOML has no null: such a policy could not be written out and read back the same (found by
  // the yaml fuzzer).
  auto errors = text_errors(
      "version: 1\n"
      "backends:\n"
      "  docker:\n"
      "    image: 'python:3.12'\n"
      "    off: ~\n"
      "  ssh: {hosts: [a, null]}\n",
      "p.yaml");
  REQUIRE(errors.size() == 2);
  CHECK_ERROR_AT(errors, "CRD2005", 5, 10);
  CHECK(errors[0].message() == "'backends.docker.off' has no value (null)");
  CHECK(errors[1].message() == "'backends.ssh.hosts[1]' has no value (null)");
  // With a value, the same tables load.
  auto p = load_policy_text(
      "version: 1\nbackends:\n  docker:\n    image: 'python:3.12'\n    off: false\n", "p.yaml");
  CHECK(p.backends.at("docker").as_object().at("off") == false);
}
