// Tests of the JSON run request: every field, and each malformed shape as a clear CRD4xxx.
#include <catch2/catch.hpp>
#include <cordon/request.hpp>

using namespace cordon;

namespace {

std::string refusal(const std::string& text) {
  try {
    parse_run_request(text);
  } catch (const Error& e) {
    return e.code() + " " + e.message();
  }
  return "";
}

}  // namespace

TEST_CASE("request: a full request parses", "[request]") {
  auto r = parse_run_request(R"({
    "argv": ["git", "clone", {"untrusted": "https://example.org/x.git"}],
    "policy": "policies/agent.toml", "backend": "landlock", "workspace": "/src",
    "timeout": "90s", "stdin": {"base64": "aGVsbG8="}, "env": {"CI": "1"}})");
  REQUIRE(r.argv.size() == 3);
  CHECK(r.argv[2] == untrusted("https://example.org/x.git"));
  CHECK(r.argv[0] == trusted("git"));
  CHECK(r.policy_path == "policies/agent.toml");
  CHECK(r.backend == "landlock");
  CHECK(r.workspace == "/src");
  CHECK(r.timeout == Duration(90000));
  CHECK(r.stdin_data == "hello");
  CHECK(r.env.at("CI") == "1");
  CHECK_FALSE(r.command);
}

TEST_CASE("request: command string, inline policy, integer timeout, text stdin", "[request]") {
  auto r = parse_run_request(
      R"({"command": "git status", "policy": {"version": 1}, "timeout": 5, "stdin": "x"})");
  CHECK(r.command == "git status");
  REQUIRE(r.policy_inline);
  CHECK(r.policy_inline->at("version").as_int64() == 1);
  CHECK(r.timeout == Duration(5000));
  CHECK(r.stdin_data == "x");
}

TEST_CASE("request: malformed requests are CRD4xxx errors naming the path", "[request]") {
  CHECK(refusal("not json").rfind("CRD4006 request /: not valid JSON", 0) == 0);
  CHECK(refusal("[1]") == "CRD4006 request /: expected a JSON object");
  CHECK(refusal("{}") == "CRD4006 request /: give exactly one of \"argv\" and \"command\"");
  CHECK(refusal(R"({"argv": ["a"], "command": "a"})").rfind("CRD4006", 0) == 0);
  CHECK(refusal(R"({"argv": []})") == "CRD4006 request /argv: expected a non-empty array");
  CHECK(refusal(R"({"argv": ["a", 3]})") ==
        "CRD4006 request /argv/1: expected a string, {\"untrusted\": \"...\"} or "
        "{\"base64\": \"...\"}");
  CHECK(refusal(R"({"argv": ["a", {"base64": "***"}]})") ==
        "CRD4006 request /argv/1/base64: not valid base64");
  CHECK(refusal(R"({"argv": ["a", {"untrusted": 1}]})") ==
        "CRD4006 request /argv/1/untrusted: expected a string");
  CHECK(refusal(R"({"argv": ["a"], "timeout": "soon"})").rfind("CRD4006 request /timeout", 0) == 0);
  CHECK(refusal(R"({"argv": ["a"], "timeout": -1})").rfind("CRD4006 request /timeout", 0) == 0);
  CHECK(refusal(R"({"argv": ["a"], "timeout": 9223372036854775807})")
            .rfind("CRD4006 request /timeout", 0) == 0);
  CHECK(refusal(R"({"argv": ["a"], "stdin": {"base64": "***"}})") ==
        "CRD4006 request /stdin/base64: not valid base64");
  CHECK(refusal(R"({"argv": ["a"], "env": {"A": 1}})") ==
        "CRD4006 request /env/A: expected a string");
  CHECK(refusal(R"({"argv": ["a"], "policy": 3})").rfind("CRD4006 request /policy", 0) == 0);
  CHECK(refusal(R"({"argv": ["a"], "shell": true})") == "CRD4006 request /shell: unknown key");
  std::string deep(100, '[');
  CHECK(refusal(R"({"argv": )" + deep).rfind("CRD4006 request /: not valid JSON", 0) == 0);
}

TEST_CASE("request: untrusted arguments are checked", "[request]") {
  CHECK(refusal(R"({"argv": ["git", "clone", {"untrusted": "--upload-pack=evil"}]})")
            .rfind("CRD4002 untrusted argument 2", 0) == 0);
  CHECK(refusal(R"({"argv": ["echo", {"untrusted": "a\u001bb"}]})").rfind("CRD4003", 0) == 0);
  CHECK(refusal(R"({"argv": ["echo", "a\u0000b"]})").rfind("CRD4003", 0) == 0);
  CHECK(refusal(R"({"command": "echo a\u0000b"})").rfind("CRD4003", 0) == 0);
}

TEST_CASE("request: an untrusted value after a literal '--' is an operand", "[request]") {
  auto r = parse_run_request(R"({"argv": ["grep", "-rn", "--", {"untrusted": "-e"}]})");
  REQUIRE(r.argv.size() == 4);
  CHECK(r.argv[3].value == "-e");
  CHECK(r.argv[3].untrusted);
  CHECK(refusal(R"({"argv": ["grep", "-rn", {"untrusted": "-e"}]})")
            .rfind("CRD4002 untrusted argument 2", 0) == 0);
  CHECK(refusal(R"({"argv": ["grep", {"untrusted": "--"}, {"untrusted": "-e"}]})")
            .rfind("CRD4002 untrusted argument 1", 0) == 0);
}

TEST_CASE("request: an argument given as base64 arrives as its bytes", "[request]") {
  std::string bytes("\xff\xfe;x", 4);
  auto r =
      parse_run_request(R"({"argv": ["printf", {"base64": ")" + encode_base64(bytes) + R"("}]})");
  REQUIRE(r.argv.size() == 2);
  CHECK(r.argv[1].value == bytes);
  CHECK_FALSE(r.argv[1].untrusted);
}

TEST_CASE("request: base64 and UTF-8 helpers", "[request]") {
  for (std::string s : std::vector<std::string>{"", "f", "fo", "foo", "foob", "fooba", "foobar",
                                                std::string("\0\xff", 2)})
    CHECK(decode_base64(encode_base64(s)) == s);
  CHECK(encode_base64("foobar") == "Zm9vYmFy");
  CHECK(encode_base64("fo") == "Zm8=");
  CHECK_FALSE(decode_base64("Zm9v!"));
  CHECK(is_utf8("caf\xc3\xa9"));
  CHECK_FALSE(is_utf8("\xc3"));
  CHECK_FALSE(is_utf8("\xc0\xaf"));      // overlong
  CHECK_FALSE(is_utf8("\xed\xa0\x80"));  // surrogate
  CHECK_FALSE(is_utf8("\xff"));
}

TEST_CASE("request: a key given twice is refused, at any depth", "[request]") {
  CHECK(refusal(R"({"argv": ["true"], "argv": ["false"]})") ==
        "CRD2010 request /argv: duplicate key 'argv'");
  CHECK(refusal(R"({"argv": ["true"], "policy": {"version": 1,
      "filesystem": {"read": ["/usr"], "read": "host"}}})") ==
        "CRD2010 request /policy/filesystem/read: duplicate key 'read'");
  CHECK(refusal(R"({"argv": [{"untrusted": "a", "untrusted": "-rf"}]})") ==
        "CRD2010 request /argv/0/untrusted: duplicate key 'untrusted'");
  // Equal keys in different objects are no duplicate.
  auto r = parse_run_request(R"({"argv": ["true"], "env": {"CI": "1"},
      "policy": {"version": 1, "env": {"pass": ["CI"]}}})");
  CHECK(r.env.at("CI") == "1");
}
