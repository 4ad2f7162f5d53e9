// Unit tests of the SBPL test support (sbpl.hpp): the parser, the checker and the evaluator, each
// both ways (what the subset allows passes, what it does not is reported or denied).
#include "sbpl.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

using namespace cordon::seatbelt::test;

namespace {

using Problems = std::vector<std::string>;

const std::map<std::string, std::string> kParams = {
    {"HOME", "/home/u"},   {"SSH", "/home/u/.ssh"}, {"USER", "/home/user"},
    {"ETC", "/etc/"},      {"ROOT", "/"},           {"SHELL", "/bin/sh"},
    {"NULL", "/dev/null"}, {"REL", "relative"},     {"WORK", "/home/u/proj"}};

const std::string kHeader = "(version 1)\n(deny default)\n";

std::string parse_error(const std::string& text) {
  try {
    parse_sbpl(text);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

Problems problems(const std::string& text) { return check_profile(parse_sbpl(text), kParams); }

// The problems of `rules` (from line 3) after a good header.
Problems rule_problems(const std::string& rules) { return problems(kHeader + rules); }

// `rules` (from line 3) after (version 1) and `default_rule`.
std::vector<SExpr> profile(const std::string& rules,
                           const std::string& default_rule = "(deny default)") {
  return parse_sbpl("(version 1)\n" + default_rule + "\n" + rules);
}

bool allowed(const std::vector<SExpr>& p, std::string_view operation, std::string_view object) {
  return evaluate(p, kParams, operation, object) == Verdict::allow;
}

}  // namespace

TEST_CASE("seatbelt sbpl: parses nested lists, symbols, numbers and strings", "[seatbelt]") {
  auto forms = parse_sbpl(
      "(version 1)\n(allow file-read*\n  (require-all (subpath (param \"HOME\")) #t AF_UNIX 12a))");
  REQUIRE(forms.size() == 2);
  CHECK(forms[0].items[1].kind == SExpr::Kind::number);
  CHECK(forms[0].items[1].text == "1");
  const SExpr& rule = forms[1];
  CHECK((rule.line == 2 && rule.column == 1));
  REQUIRE(rule.items.size() == 3);
  CHECK(rule.items[1].kind == SExpr::Kind::symbol);
  CHECK(rule.items[1].text == "file-read*");
  const SExpr& all = rule.items[2];
  CHECK((all.kind == SExpr::Kind::list && all.line == 3 && all.column == 3));
  REQUIRE(all.items.size() == 5);
  const SExpr& name = all.items[1].items[1].items[1];
  CHECK((name.kind == SExpr::Kind::string && name.text == "HOME"));
  CHECK((name.line == 3 && name.column == 32));
  for (int i : {2, 3, 4}) CHECK(all.items[i].kind == SExpr::Kind::symbol);
  CHECK(all.items[4].text == "12a");
  CHECK(parse_sbpl("").empty());
}

TEST_CASE("seatbelt sbpl: skips comments to the end of the line", "[seatbelt]") {
  auto forms =
      parse_sbpl("; header (\n(version 1) ; trailing )\n;; (deny default\n(deny default) ;");
  REQUIRE(forms.size() == 2);
  CHECK(forms[0].items.size() == 2);
  CHECK((forms[1].line == 4 && forms[1].column == 1));
  CHECK(forms[1].items.size() == 2);
  // Inside a string a semicolon is text.
  auto with = parse_sbpl("(with message \"a ; b\")");
  CHECK(with[0].items[2].text == "a ; b");
}

TEST_CASE("seatbelt sbpl: decodes the two string escapes", "[seatbelt]") {
  auto forms = parse_sbpl(R"((with message "say \"hi\" \\ done"))");
  CHECK(forms[0].items[2].text == R"(say "hi" \ done)");
  auto lines = parse_sbpl("(a \"one\ntwo\" b)");
  CHECK(lines[0].items[1].text == "one\ntwo");
  CHECK((lines[0].items[2].line == 2 && lines[0].items[2].column == 6));
  CHECK(parse_error(R"((with message "bad \q escape"))") == "1:20: bad escape '\\q'");
  CHECK(parse_error(R"((with message "bad \n escape"))") == "1:20: bad escape '\\n'");
}

TEST_CASE("seatbelt sbpl: parse errors name the line and column", "[seatbelt]") {
  CHECK(parse_error("(allow") == "1:1: unclosed parenthesis");
  CHECK(parse_error("(version 1)\n(allow file-read*\n  (subpath (param \"HOME\"))") ==
        "2:1: unclosed parenthesis");
  CHECK(parse_error("\"unterminated") == "1:1: unterminated string");
  CHECK(parse_error(kHeader + "(allow (literal \"unterminated))") == "3:17: unterminated string");
  CHECK(parse_error("(a \"ends in a backslash\\") == "1:4: unterminated string");
  CHECK(parse_error("(version 1))") == "1:12: unexpected ')'");
  CHECK(parse_error("(version 1)\n deny") == "2:2: top-level atom 'deny'");
  // The same forms, balanced and terminated, parse.
  CHECK(parse_error("(allow)") == "");
  CHECK(parse_error(kHeader + "(allow (literal \"terminated\"))") == "");
  CHECK(parse_error("(version 1)") == "");
}

TEST_CASE("seatbelt sbpl: a good profile has no problems", "[seatbelt]") {
  CHECK(rule_problems(R"(
(allow process-exec (literal (param "SHELL")) (subpath (param "WORK")))
(allow process-fork)
(allow signal process-info* (target same-sandbox))
(allow file-read* file-map-executable (subpath (param "ROOT")))
(allow file-write* (require-all (subpath (param "WORK")) (require-not (literal (param "SSH")))))
(deny file-read* file-write* (subpath (param "SSH")) (with message "secrets"))
(allow file-write-data file-ioctl (require-any (literal (param "NULL")) (vnode-type TTY)))
(allow mach-lookup (global-name "com.apple.system.logger"))
(allow network-outbound (remote tcp "localhost:8080") (remote ip "*:443"))
(allow network-bind network-inbound (local tcp "localhost:*") (local ip "*:*"))
(allow system-socket (socket-domain AF_UNIX))
(deny sysctl-read (with no-log))
(allow ipc-posix-shm* ipc-posix-sem pseudo-tty user-preference-read iokit-open)
)")
            .empty());
  CHECK(problems("(version 1)\n(allow default)\n(deny network*)").empty());
  CHECK(problems("(version 1)\n(deny default (with no-log))").empty());
}

TEST_CASE("seatbelt sbpl: check reports a missing, duplicated or misplaced version", "[seatbelt]") {
  CHECK(problems("(deny default)\n(allow process-fork)") ==
        Problems{"1:1: default rule must come second", "1:1: missing (version 1)"});
  CHECK(problems("") == Problems{"1:1: missing (version 1)",
                                 "1:1: missing default rule: (deny default) or (allow default) "
                                 "comes second"});
  CHECK(problems(kHeader + "(version 1)") == Problems{"3:1: duplicated (version 1)"});
  CHECK(problems("(deny default)\n(version 1)") ==
        Problems{"1:1: default rule must come second", "2:1: (version 1) must come first"});
  CHECK(problems("(version 2)\n(deny default)") ==
        Problems{"1:1: unsupported version: expected (version 1)"});
}

TEST_CASE("seatbelt sbpl: check reports a missing, duplicated or misplaced default rule",
          "[seatbelt]") {
  CHECK(problems("(version 1)\n(allow process-fork)") ==
        Problems{"2:1: missing default rule: (deny default) or (allow default) comes second"});
  CHECK(problems("(version 1)\n(allow process-fork)\n(deny default)") ==
        Problems{"3:1: default rule must come second"});
  CHECK(rule_problems("(allow default)") == Problems{"3:1: duplicated default rule"});
  CHECK(problems("(version 1)\n(deny default (literal (param \"HOME\")))") ==
        Problems{"2:1: default rule takes no other operation or filter"});
  CHECK(rule_problems("(allow default process-fork)") ==
        Problems{"3:1: duplicated default rule",
                 "3:1: default rule takes no other operation or filter"});
}

TEST_CASE("seatbelt sbpl: check reports bad rules and unknown forms", "[seatbelt]") {
  CHECK(rule_problems("(allow (literal (param \"HOME\")))") ==
        Problems{"3:1: rule with no operation"});
  CHECK(rule_problems("(deny)") == Problems{"3:1: rule with no operation"});
  CHECK(rule_problems("(allow file-read-everything)") ==
        Problems{"3:8: unknown operation 'file-read-everything'"});
  CHECK(rule_problems("(allow file-read* (subpath (param \"HOME\")) file-write*)") ==
        Problems{"3:44: operation 'file-write*' after a filter"});
  CHECK(rule_problems("(allow file-read* \"/etc\")") ==
        Problems{"3:19: unexpected '/etc' in a rule"});
  CHECK(rule_problems("(define x 1)") == Problems{"3:1: unknown top-level form 'define'"});
  CHECK(rule_problems("(import \"bsd.sb\")") == Problems{"3:1: unknown top-level form 'import'"});
  CHECK(rule_problems("(\"allow\" file-read*)") == Problems{"3:1: expected a form (NAME ...)"});
  CHECK(rule_problems("(allow file-read-data file-write-unlink)").empty());
}

TEST_CASE("seatbelt sbpl: check wants every path through a parameter", "[seatbelt]") {
  CHECK(rule_problems(R"((allow file-read* (subpath "/etc")))") ==
        Problems{"3:28: path text outside parameters: \"/etc\""});
  CHECK(rule_problems(R"((allow file-read* (literal (param "NOPE"))))") ==
        Problems{"3:28: unknown parameter 'NOPE'"});
  CHECK(rule_problems(R"((allow file-read* (literal (param "REL"))))") ==
        Problems{"3:28: parameter 'REL' is not an absolute path: 'relative'"});
  CHECK(rule_problems(R"((allow file-read* (subpath (string-append (param "HOME") "/x"))))") ==
        Problems{"3:28: expected (param \"NAME\") as the path"});
  CHECK(rule_problems(R"((allow file-read* (subpath (param "HOME") (param "ETC"))))") ==
        Problems{"3:19: 'subpath' takes 1 argument(s)"});
  CHECK(rule_problems(R"((allow file-read* (subpath (param "HOME")) (literal (param "ETC"))))")
            .empty());
}

TEST_CASE("seatbelt sbpl: check rejects filters outside the subset", "[seatbelt]") {
  CHECK(rule_problems(R"((allow file-read* (regex #"^/etc/")))") ==
        Problems{"3:19: 'regex' filter is not in the subset cordon emits"});
  CHECK(rule_problems(R"((allow file-read* (prefix (param "HOME"))))") ==
        Problems{"3:19: 'prefix' filter is not in the subset cordon emits"});
  CHECK(rule_problems(R"((allow file-read* (extension "com.apple.app-sandbox.read")))") ==
        Problems{"3:19: unknown filter 'extension'"});
  CHECK(rule_problems("(allow signal (target others))") ==
        Problems{"3:23: 'target' does not take 'others'"});
  CHECK(rule_problems("(allow system-socket (socket-domain 1))") ==
        Problems{"3:37: 'socket-domain' does not take '1'"});
  CHECK(rule_problems("(allow file-ioctl (vnode-type GADGET))") ==
        Problems{"3:31: 'vnode-type' does not take 'GADGET'"});
  CHECK(rule_problems("(allow mach-lookup (global-name com.apple.x))") ==
        Problems{"3:33: 'global-name' takes a string"});
  CHECK(rule_problems("(allow file-read* (require-any))") ==
        Problems{"3:19: 'require-any' takes at least one filter"});
  CHECK(rule_problems(R"((allow file-read* (require-not (regex #"x") (literal (param "HOME")))))")
            .size() == 1);
  CHECK(rule_problems(R"((allow file-read* (require-all (prefix (param "HOME")))))") ==
        Problems{"3:32: 'prefix' filter is not in the subset cordon emits"});
}

TEST_CASE("seatbelt sbpl: check reports with no-sandbox wherever it is", "[seatbelt]") {
  CHECK(rule_problems(R"((allow process-exec (with no-sandbox) (literal (param "SHELL"))))") ==
        Problems{"3:21: (with no-sandbox) would run a binary unsandboxed"});
  CHECK(rule_problems(R"((allow process-exec (require-any (with no-sandbox))))") ==
        Problems{"3:34: (with no-sandbox) would run a binary unsandboxed"});
  CHECK(rule_problems("(with no-sandbox)") ==
        Problems{"3:1: unknown top-level form 'with'",
                 "3:1: (with no-sandbox) would run a binary unsandboxed"});
  CHECK(rule_problems("(allow process-exec (with send-signal SIGKILL))") ==
        Problems{"3:21: unknown modifier: expected (with message \"...\") or (with no-log)"});
  CHECK(rule_problems(R"((allow process-exec (with no-log) (with message "x")))").empty());
}

TEST_CASE("seatbelt sbpl: check allows only localhost or any host in network filters",
          "[seatbelt]") {
  CHECK(rule_problems(R"((allow network-outbound (remote ip "127.0.0.1:80")))") ==
        Problems{"3:36: rejected host '127.0.0.1': only * or localhost"});
  CHECK(rule_problems(R"((allow network-outbound (remote tcp "example.com:*")))") ==
        Problems{"3:37: rejected host 'example.com': only * or localhost"});
  CHECK(rule_problems(R"((allow network-bind (local tcp "localhost:http")))") ==
        Problems{"3:32: bad port 'http'"});
  CHECK(rule_problems(R"((allow network-bind (local tcp "localhost:65536")))") ==
        Problems{"3:32: bad port '65536'"});
  CHECK(rule_problems(R"((allow network-bind (local tcp "localhost")))") ==
        Problems{"3:32: expected \"HOST:PORT\", not 'localhost'"});
  CHECK(rule_problems(R"((allow network-outbound (remote udp "localhost:53")))") ==
        Problems{"3:33: unknown protocol 'udp': expected tcp or ip"});
  CHECK(
      rule_problems(R"((allow network-outbound (remote ip "localhost:65535") (remote tcp "*:*")))")
          .empty());
}

TEST_CASE("seatbelt sbpl: the last matching rule wins", "[seatbelt]") {
  auto p = profile(R"((allow file-read* (subpath (param "HOME")))
(deny file-read* (subpath (param "SSH"))))");
  CHECK_FALSE(allowed(p, "file-read-data", "/home/u/.ssh/id"));
  CHECK(allowed(p, "file-read-data", "/home/u/x"));
  CHECK_FALSE(allowed(p, "file-read-data", "/etc/x"));
  // The other order: the later allow covers the secret too.
  auto reversed = profile(R"((deny file-read* (subpath (param "SSH")))
(allow file-read* (subpath (param "HOME"))))");
  CHECK(allowed(reversed, "file-read-data", "/home/u/.ssh/id"));
}

TEST_CASE("seatbelt sbpl: require-not inside require-all carves out a path", "[seatbelt]") {
  auto p = profile(
      R"((allow file-write* (require-all (subpath (param "HOME")) (require-not (subpath (param "SSH"))))))");
  CHECK(allowed(p, "file-write-data", "/home/u/x"));
  CHECK_FALSE(allowed(p, "file-write-data", "/home/u/.ssh/id"));
  CHECK_FALSE(allowed(p, "file-write-data", "/home/u/.ssh"));
  CHECK_FALSE(allowed(p, "file-write-data", "/etc/x"));
  auto any = profile(
      R"((allow file-read* (require-any (literal (param "NULL")) (literal (param "SHELL")))))");
  CHECK(allowed(any, "file-read-data", "/bin/sh"));
  CHECK_FALSE(allowed(any, "file-read-data", "/bin/bash"));
}

TEST_CASE("seatbelt sbpl: subpath stops at a path component boundary", "[seatbelt]") {
  auto p = profile(R"((allow file-read* (subpath (param "USER"))))");
  CHECK(allowed(p, "file-read-data", "/home/user"));
  CHECK(allowed(p, "file-read-data", "/home/user/a/b"));
  CHECK_FALSE(allowed(p, "file-read-data", "/home/user2"));
  CHECK_FALSE(allowed(p, "file-read-data", "/home/user2/a"));
  CHECK_FALSE(allowed(p, "file-read-data", "/home"));
  auto etc = profile(R"((allow file-read* (subpath (param "ETC"))))");  // "/etc/"
  CHECK(allowed(etc, "file-read-data", "/etc/hosts"));
  CHECK_FALSE(allowed(etc, "file-read-data", "/etcetera"));
  auto root = profile(R"((allow file-read* (subpath (param "ROOT"))))");
  CHECK(allowed(root, "file-read-data", "/any/path"));
  CHECK_FALSE(allowed(root, "file-read-data", "relative"));
}

TEST_CASE("seatbelt sbpl: literal matches the exact path only, unlike subpath", "[seatbelt]") {
  auto p = profile(R"((allow process-exec (literal (param "SHELL"))))");
  CHECK(allowed(p, "process-exec", "/bin/sh"));
  CHECK_FALSE(allowed(p, "process-exec", "/bin/sh/x"));
  CHECK_FALSE(allowed(p, "process-exec", "/bin/shx"));
  CHECK_FALSE(allowed(p, "process-exec", "/bin"));
  auto sub = profile(R"((allow process-exec (subpath (param "SHELL"))))");
  CHECK(allowed(sub, "process-exec", "/bin/sh/x"));
  auto unknown = profile(R"((allow process-exec (literal (param "NOPE"))))");
  CHECK_FALSE(allowed(unknown, "process-exec", ""));
  CHECK_FALSE(allowed(unknown, "process-exec", "/bin/sh"));
}

TEST_CASE("seatbelt sbpl: wildcard operations cover their family only", "[seatbelt]") {
  auto p = profile(R"((allow file-read* network* process-info* (with message "m"))
(allow file-write-data))");
  CHECK(allowed(p, "file-read-data", "/x"));
  CHECK(allowed(p, "file-read-metadata", "/x"));
  CHECK(allowed(p, "network-bind", "localhost:1"));
  CHECK(allowed(p, "process-info-pidinfo", ""));
  CHECK(allowed(p, "file-write-data", "/x"));
  CHECK_FALSE(allowed(p, "file-write-create", "/x"));
  CHECK_FALSE(allowed(p, "file-write-unlink", "/x"));
  CHECK_FALSE(allowed(p, "process-exec", "/x"));
  CHECK_THROWS_AS(evaluate(p, kParams, "file-read*", "/x"), std::invalid_argument);
  CHECK_THROWS_AS(evaluate(p, kParams, "file-reed-data", "/x"), std::invalid_argument);
}

TEST_CASE("seatbelt sbpl: network rules match localhost ports", "[seatbelt]") {
  auto p = profile(R"((allow network-outbound (remote tcp "localhost:8080") (remote ip "*:443"))
(allow network-bind (local ip "localhost:*")))");
  CHECK(allowed(p, "network-outbound", "localhost:8080"));
  CHECK_FALSE(allowed(p, "network-outbound", "localhost:8081"));
  CHECK(allowed(p, "network-outbound", "example.com:443"));
  CHECK_FALSE(allowed(p, "network-outbound", "example.com:80"));
  CHECK(allowed(p, "network-bind", "localhost:1234"));
  CHECK_FALSE(allowed(p, "network-bind", "example.com:1234"));
  CHECK_FALSE(allowed(p, "network-inbound", "localhost:1234"));
  auto any = profile(R"((allow network-outbound (remote ip "*:*")))");
  CHECK(allowed(any, "network-outbound", "example.com:80"));
}

TEST_CASE("seatbelt sbpl: an allow-default profile denies what it names", "[seatbelt]") {
  auto p = profile(R"((deny file-write* (subpath (param "ETC")))
(deny network-outbound))",
                   "(allow default)");
  CHECK_FALSE(allowed(p, "file-write-data", "/etc/passwd"));
  CHECK(allowed(p, "file-write-data", "/tmp/x"));
  CHECK(allowed(p, "file-read-data", "/etc/passwd"));
  CHECK_FALSE(allowed(p, "network-outbound", "localhost:80"));
  CHECK(allowed(p, "process-fork", ""));
}

TEST_CASE("seatbelt sbpl: other filters match their objects", "[seatbelt]") {
  auto p = profile(R"((allow mach-lookup (global-name "com.apple.system.logger"))
(allow system-socket (socket-domain AF_UNIX))
(allow signal (target same-sandbox))
(allow file-ioctl (vnode-type CHARACTER-DEVICE)))");
  CHECK(allowed(p, "mach-lookup", "com.apple.system.logger"));
  CHECK_FALSE(allowed(p, "mach-lookup", "com.apple.other"));
  CHECK(allowed(p, "system-socket", "AF_UNIX"));
  CHECK_FALSE(allowed(p, "system-socket", "AF_INET"));
  CHECK(allowed(p, "signal", "1234"));
  CHECK(allowed(p, "file-ioctl", "/dev/tty"));
  CHECK_FALSE(allowed(p, "sysctl-read", ""));
}

TEST_CASE("seatbelt sbpl: evaluate refuses what it cannot decide", "[seatbelt]") {
  auto none = parse_sbpl("(version 1)\n(allow file-read*)");
  CHECK_THROWS_WITH(evaluate(none, kParams, "file-read-data", "/x"),
                    "1:1: profile has no default rule");
  auto regex = profile(R"((allow file-read* (regex #"^/x")))");
  CHECK_THROWS_WITH(evaluate(regex, kParams, "file-read-data", "/x"),
                    "3:19: cannot evaluate filter 'regex'");
  // A rule of another operation is not looked at.
  CHECK_FALSE(allowed(regex, "file-write-data", "/x"));
}
