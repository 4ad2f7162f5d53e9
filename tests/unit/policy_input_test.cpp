// Bad input (issue 2): each case is a CRD2xxx error in bounded time, never a crash. The cases are
// generated here so the repository carries no 50 MB file.
#include <catch2/catch.hpp>
#include <cordon/policy_loader.hpp>

#include "policy_test_support.hpp"

#include <chrono>
#include <random>

using namespace cordon;
using test::text_errors;

namespace {

// Loads `text` as `name`, requires a refusal with `code`, and that it came quickly (generous
// enough for a sanitizer build on a loaded machine).
Error refused_quickly(const std::string& text, const std::string& name, const std::string& code) {
  auto start = std::chrono::steady_clock::now();
  auto errors = text_errors(text, name);
  auto elapsed = std::chrono::steady_clock::now() - start;
  INFO(test::render(errors));
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].code() == code);
  CHECK(elapsed < std::chrono::seconds(5));
  return errors[0];
}

std::string repeat(const std::string& s, int n) {
  std::string out;
  out.reserve(s.size() * n);
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

constexpr int kDeep = 10'000;

}  // namespace

TEST_CASE("policy_input: a 50 MB file is refused before it is read", "[policy][input]") {
  test::TempDir dir;
  auto file = dir.path() / "huge.toml";
  { std::ofstream(file) << "version = 1\n"; }
  std::filesystem::resize_file(file, 50u * 1024 * 1024);  // sparse: nothing is written
  auto start = std::chrono::steady_clock::now();
  auto errors = test::errors_of([&] { load_policy_file(file); });
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(500));
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].code() == "CRD2014");
  CHECK(errors[0].message() == "file is 52428800 bytes, more than the 1048576 a policy may have");
  // The same text handed over in memory is refused too.
  refused_quickly(std::string(50u * 1024 * 1024, 'a'), "huge.yaml", "CRD2014");
}

TEST_CASE("policy_input: binary garbage is refused", "[policy][input]") {
  std::mt19937 rng(20240601);
  std::string garbage(64 * 1024, '\0');
  for (auto& c : garbage) c = static_cast<char>(rng() & 0xff);
  refused_quickly(garbage, "g.toml", "CRD2014");
  refused_quickly(garbage, "g.yaml", "CRD2014");
}

TEST_CASE("policy_input: a NUL byte is refused at its position", "[policy][input]") {
  std::string text = "version = 1\nname = \"a";
  text += '\0';
  text += "b\"\n";
  Error e = refused_quickly(text, "n.toml", "CRD2014");
  CHECK(e.where()->line == 2);
  CHECK(e.where()->column == 10);
  CHECK(e.message() == "file contains a nul byte");
  refused_quickly(text, "n.yaml", "CRD2014");
}

TEST_CASE("policy_input: invalid UTF-8 is refused at its position", "[policy][input]") {
  for (std::string bad : {"\xff", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82"}) {
    Error e =
        refused_quickly("version = 1\n[policy]\nname = \"" + bad + "\"\n", "u.toml", "CRD2014");
    CHECK(e.where()->line == 3);
    CHECK(e.where()->column == 9);
    refused_quickly("version: 1\npolicy: {name: \"" + bad + "\"}\n", "u.yaml", "CRD2014");
  }
  // Valid multi-byte text is fine.
  CHECK(load_policy_text("version = 1\n[policy]\nname = \"caf\xc3\xa9 \xe2\x9c\x93\"\n", "u.toml")
            .name == "caf\xc3\xa9 \xe2\x9c\x93");
}

TEST_CASE("policy_input: 10,000 levels of nesting are refused in toml", "[policy][input]") {
  refused_quickly("a = " + repeat("[", kDeep) + repeat("]", kDeep) + "\n", "d.toml", "CRD2014");
  refused_quickly("a = " + repeat("{b = ", kDeep) + "1" + repeat("}", kDeep) + "\n", "d.toml",
                  "CRD2014");
  // Dotted keys nest without a single bracket; toml++ alone overflows its stack on these.
  refused_quickly("a" + repeat(".a", kDeep) + " = 1\n", "d.toml", "CRD2014");
  refused_quickly("[a" + repeat(".a", kDeep) + "]\n", "d.toml", "CRD2014");
  refused_quickly("[[a" + repeat(".a", kDeep) + "]]\n", "d.toml", "CRD2014");
  Error e = refused_quickly("version = 1\nx = " + repeat("[", 100), "d.toml", "CRD2014");
  CHECK(e.where()->line == 2);
  CHECK(e.where()->column == 68);  // `x` is one level, so the 64th `[` is the 65th level
}

TEST_CASE("policy_input: 10,000 levels of nesting are refused in yaml", "[policy][input]") {
  refused_quickly(repeat("[", kDeep) + repeat("]", kDeep) + "\n", "d.yaml", "CRD2014");
  refused_quickly(repeat("{a: ", kDeep) + "1" + repeat("}", kDeep) + "\n", "d.yaml", "CRD2014");
  refused_quickly(repeat("- ", kDeep) + "x\n", "d.yaml", "CRD2014");
  std::string block;  // a: / " a:" / "  a:" ... one space deeper each line
  for (int i = 0; i < 1000; ++i) block += std::string(i, ' ') + "a:\n";
  refused_quickly(block, "d.yaml", "CRD2014");
}

TEST_CASE("policy_input: nesting within the cap still loads", "[policy][input]") {
  // Brackets inside strings and comments do not count.
  std::string text = "version = 1\n[policy]\nname = \"" + repeat("[", 200) + "\" # " +
                     repeat("{", 200) + "\n[backends.x]\ndeep = " + repeat("[", 40) +
                     repeat("]", 40) + "\n";
  CHECK(load_policy_text(text, "ok.toml").name == repeat("[", 200));
  std::string yaml = "version: 1\npolicy:\n  name: '" + repeat("[", 200) + "'\nbackends:\n  x:\n" +
                     "    deep: " + repeat("[", 40) + repeat("]", 40) + "\n    note: |\n" +
                     "      " + repeat("[", 100) + "\n";
  CHECK(load_policy_text(yaml, "ok.yaml").name == repeat("[", 200));
}

TEST_CASE("policy_input: a yaml alias bomb is refused", "[policy][input]") {
  std::string bomb = "version: 1\nbackends:\n  x:\n    a0: [lol, lol, lol, lol, lol]\n";
  for (int i = 1; i <= 9; ++i) {
    std::string prev = "a" + std::to_string(i - 1);
    bomb += "    a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" +
            repeat("*" + prev + ", ", 9) + "*" + prev + "]\n";
  }
  // Anchor each level: rewrite a0 with an anchor so the aliases resolve.
  bomb.replace(bomb.find("a0: ["), 5, "a0: &a0 [");
  Error e = refused_quickly(bomb, "bomb.yaml", "CRD2014");
  CHECK(e.message().find("more than 100000 values") != std::string::npos);
}

TEST_CASE("policy_input: a self-referencing yaml alias is refused", "[policy][input]") {
  auto errors = text_errors("version: 1\nbackends:\n  x: &a {y: *a}\n", "loop.yaml");
  REQUIRE_FALSE(errors.empty());
  CHECK(errors[0].code().rfind("CRD20", 0) == 0);
}

TEST_CASE("policy_input: a toml duplicate table is CRD2010", "[policy][input]") {
  Error e = refused_quickly("version = 1\n[limits]\nmemory_mb = 1\n\n[limits]\nmemory_mb = 2\n",
                            "dup.toml", "CRD2010");
  CHECK(e.where()->line == 5);
}

TEST_CASE("policy_input: a huge flat file within the byte cap is bounded", "[policy][input]") {
  std::string many = "version = 1\n[backends.x]\nv = [" + repeat("1,", 300'000) + "1]\n";
  refused_quickly(many, "flat.toml", "CRD2014");
  std::string keys = "version: 1\nlimits:\n";
  for (int i = 0; i < 20'000; ++i) keys += "  k" + std::to_string(i) + ": 1\n";
  auto start = std::chrono::steady_clock::now();
  auto errors = text_errors(keys, "keys.yaml");
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  CHECK(errors.size() == kMaxReportedErrors + 1);
}

TEST_CASE("policy_input: a stray comma does not hang the yaml parser", "[policy][input]") {
  // yaml-cpp's LoadAll loops forever on these (found by fuzz_policy_yaml).
  refused_quickly(",rs:", "comma.yaml", "CRD2002");
  refused_quickly(",", "comma.yaml", "CRD2002");
  refused_quickly("version: 1\n,\n", "comma.yaml", "CRD2002");
}
