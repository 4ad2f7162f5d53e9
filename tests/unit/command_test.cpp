// Tests of untrusted-argument checks: flag injection and control characters, both ways.
#include <catch2/catch.hpp>
#include <cordon/command.hpp>

using namespace cordon;

namespace {

std::string refusal(const std::vector<Argument>& args) {
  try {
    checked_argv(args);
  } catch (const Error& e) {
    return e.code() + " " + e.message();
  }
  return "";
}

}  // namespace

TEST_CASE("command: untrusted values that pose as flags are refused at every position",
          "[command]") {
  for (std::size_t pos = 1; pos < 5; ++pos) {
    std::vector<Argument> args = {trusted("git"), trusted("clone")};
    while (args.size() < pos) args.push_back(untrusted("ok"));
    args.insert(args.begin() + static_cast<long>(pos), untrusted("--upload-pack=evil"));
    INFO(pos);
    CHECK(refusal(args) == "CRD4002 untrusted argument " + std::to_string(pos) +
                               " starts with '-' and would be read as an option");
  }
  CHECK(refusal({untrusted("-rf")}).rfind("CRD4002 untrusted the program (argument 0)", 0) == 0);
  CHECK(refusal({trusted("ls"), untrusted("-")}).rfind("CRD4002", 0) == 0);
}

TEST_CASE("command: the same values trusted, or not starting with '-', pass", "[command]") {
  CHECK(checked_argv({trusted("git"), trusted("clone"), trusted("--depth=1")}) ==
        std::vector<std::string>{"git", "clone", "--depth=1"});
  CHECK(checked_argv({trusted("git"), trusted("clone"), untrusted("https://x/y.git")}) ==
        std::vector<std::string>{"git", "clone", "https://x/y.git"});
  CHECK(checked_argv({trusted("cat"), untrusted("./-rf")}).back() == "./-rf");
  CHECK(checked_argv({trusted("echo"), untrusted("a-b"), untrusted("")}).size() == 3);
}

TEST_CASE("command: control characters", "[command]") {
  CHECK(refusal({trusted("echo"), trusted(std::string("a\0b", 3))}) ==
        "CRD4003 argument 1 contains a NUL byte");
  CHECK(refusal({trusted("echo"), untrusted(std::string("a\0b", 3))}).rfind("CRD4003", 0) == 0);
  CHECK(refusal({trusted("echo"), untrusted("a\nb")}) ==
        "CRD4003 untrusted argument 1 contains the control character 0x0a at offset 1");
  CHECK(refusal({trusted("echo"), untrusted("\x1b[2J")}).rfind("CRD4003", 0) == 0);
  CHECK(refusal({trusted("echo"), untrusted("x\x7f")}).rfind("CRD4003", 0) == 0);
  // Allowed: tab in an untrusted value, newlines in the caller's own, UTF-8.
  CHECK(checked_argv({trusted("echo"), untrusted("a\tb")}).back() == "a\tb");
  CHECK(checked_argv({trusted("echo"), trusted("a\nb")}).back() == "a\nb");
  CHECK(checked_argv({trusted("echo"), untrusted("caf\xc3\xa9")}).back() == "caf\xc3\xa9");
}

TEST_CASE("command: empty argv is a clear error", "[command]") {
  CHECK(refusal({}).rfind("CRD4006", 0) == 0);
  CHECK(refusal({trusted("")}).rfind("CRD4006", 0) == 0);
}

TEST_CASE("command: after the caller's own '--' an untrusted value may start with '-'",
          "[command]") {
  // The CRD4002 hint says to put '--' before untrusted operands: that must then work.
  CHECK(checked_argv({trusted("grep"), trusted("-rn"), trusted("--"), untrusted("-e")}) ==
        std::vector<std::string>{"grep", "-rn", "--", "-e"});
  CHECK(checked_argv({trusted("rm"), trusted("--"), untrusted("-rf"), untrusted("--x")}).size() ==
        4);
  // Before the '--' it is still refused, and so are control characters after it.
  CHECK(refusal({trusted("grep"), untrusted("-e"), trusted("--"), untrusted("x")}) ==
        "CRD4002 untrusted argument 1 starts with '-' and would be read as an option");
  CHECK(refusal({trusted("grep"), trusted("--"), untrusted("-\x1b[2J")}).rfind("CRD4003", 0) == 0);
  // Only the caller's '--' counts: an untrusted one is itself refused, a "--" program is not
  // an end of options.
  CHECK(refusal({trusted("grep"), untrusted("--"), untrusted("-e")}).rfind("CRD4002", 0) == 0);
  CHECK(refusal({trusted("--"), untrusted("-e")}) ==
        "CRD4002 untrusted argument 1 starts with '-' and would be read as an option");
  CHECK(refusal({trusted("grep"), trusted("-rn"), untrusted("-e")}) ==
        "CRD4002 untrusted argument 2 starts with '-' and would be read as an option");
}
