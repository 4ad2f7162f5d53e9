// Tests of the command-string splitter and shell-operator detection (issue: command safety).
#include <catch2/catch.hpp>
#include <cordon/shell_syntax.hpp>

using namespace cordon;
using Words = std::vector<std::string>;

namespace {

std::string op_in(const std::string& s) {
  auto op = find_shell_operator(s);
  return op ? op->text : "";
}

std::string error_code(const std::string& s) {
  try {
    split_command(s);
  } catch (const Error& e) {
    return e.code();
  }
  return "";
}

}  // namespace

TEST_CASE("shell_syntax: every operator outside quotes is refused", "[shell]") {
  struct Case {
    const char* text;
    const char* op;
    std::size_t offset;
  };
  Case cases[] = {
      {"ls | wc", "|", 3},        {"a || b", "||", 2},      {"sleep 1 &", "&", 8},
      {"a && b", "&&", 2},        {"a; b", ";", 1},         {"sort < in", "<", 5},
      {"echo x > f", ">", 7},     {"echo x >> f", ">>", 7}, {"cat << EOF", "<<", 4},
      {"diff <(a) b", "<(", 5},   {"tee >(gzip)", ">(", 4}, {"echo $(id)", "$(", 5},
      {"echo `id`", "`", 5},      {"a\nb", "newline", 1},   {"echo \"$(id)\"", "$(", 6},
      {"echo \"`id`\"", "`", 6},  {"echo x 2>&1", ">&", 8}, {"cmd &> log", "&>", 4},
      {"cat <<< word", "<<<", 4}, {"(cd /; ls)", "(", 0},   {"echo $HOME", "$HOME", 5},
      {"echo \"${X}\"", "${", 6}, {"echo $?", "$?", 5},     {"echo $1", "$1", 5},
      {"a;;", ";;", 1},           {"x >| f", ">|", 2},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    auto op = find_shell_operator(c.text);
    REQUIRE(op);
    CHECK(op->text == c.op);
    CHECK(op->offset == c.offset);
    CHECK(error_code(c.text) == "CRD4001");
  }
}

TEST_CASE("shell_syntax: the same characters quoted are plain text", "[shell]") {
  struct Case {
    const char* text;
    Words words;
  };
  Case cases[] = {
      {"echo 'x > f'", {"echo", "x > f"}},
      {"echo \"x > f\"", {"echo", "x > f"}},
      {"echo \"a | b\"", {"echo", "a | b"}},
      {"echo 'a && b; c'", {"echo", "a && b; c"}},
      {"echo '$(id)'", {"echo", "$(id)"}},
      {"echo '`id`'", {"echo", "`id`"}},
      {"echo '$HOME'", {"echo", "$HOME"}},
      {"echo \\> f", {"echo", ">", "f"}},
      {"echo \\|", {"echo", "|"}},
      {"echo \"\\$HOME\"", {"echo", "$HOME"}},
      {"echo \"\\`id\\`\"", {"echo", "`id`"}},
      {"echo 'a\nb'", {"echo", "a\nb"}},
      {"echo \"<(x)\"", {"echo", "<(x)"}},
      {"grep 'a$' f", {"grep", "a$", "f"}},
      {"echo $", {"echo", "$"}},
      {"echo a$/b", {"echo", "a$/b"}},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    CHECK_FALSE(find_shell_operator(c.text));
    CHECK(split_command(c.text) == c.words);
  }
}

TEST_CASE("shell_syntax: POSIX word splitting", "[shell]") {
  struct Case {
    const char* text;
    Words words;
  };
  Case cases[] = {
      {"git status --short", {"git", "status", "--short"}},
      {"  spaced\t\ttabs  ", {"spaced", "tabs"}},
      {"a'b'c", {"abc"}},
      {"a\"b\"c", {"abc"}},
      {"''", {""}},
      {"x '' y", {"x", "", "y"}},
      {"\"\"", {""}},
      {"'it'\\''s'", {"it's"}},
      {"\"say \\\"hi\\\"\"", {"say \"hi\""}},
      {"\"a\\b\"", {"a\\b"}},
      {"a\\ b", {"a b"}},
      {"a\\\nb", {"ab"}},
      {"\"a\\\nb\"", {"ab"}},
      {"trailing\\", {"trailing\\"}},
      {"$'a\\nb'", {"a\nb"}},
      {"$'tab\\there'", {"tab\there"}},
      {"$'\\x41\\102'", {"AB"}},
      {"$'it\\'s'", {"it's"}},
      {"$'\\e[0m'", {"\x1b[0m"}},
      {"pre$'\\t'post", {"pre\tpost"}},
      {"ls # a comment | with > operators", {"ls"}},
      {"echo a#b", {"echo", "a#b"}},
      {"echo '#' x", {"echo", "#", "x"}},
      {"git status\n", {"git", "status"}},
      {"git status \n\n", {"git", "status"}},
      {"caf\xc3\xa9 \xe2\x9c\x93", {"caf\xc3\xa9", "\xe2\x9c\x93"}},
      {"echo \"\xe6\x97\xa5\xe6\x9c\xac\"", {"echo", "\xe6\x97\xa5\xe6\x9c\xac"}},
      {"ls *.py", {"ls", "*.py"}},
      {"ls ~/x", {"ls", "~/x"}},
      {"cmd FOO=bar", {"cmd", "FOO=bar"}},
      {"echo {a,b}", {"echo", "{a,b}"}},
      {"echo \"it's\"", {"echo", "it's"}},
      {"echo 'say \"hi\"'", {"echo", "say \"hi\""}},
      {"echo \"nested 'single' inside\"", {"echo", "nested 'single' inside"}},
      {"python3 -c 'print(1 > 0)'", {"python3", "-c", "print(1 > 0)"}},
      {"sh -c 'a | b'", {"sh", "-c", "a | b"}},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    CHECK(split_command(c.text) == c.words);
  }
}

TEST_CASE("shell_syntax: comments and heredocs", "[shell]") {
  CHECK(op_in("ls # ok\nrm -rf x") == "newline");
  CHECK(op_in("cat <<EOF\nhello\nEOF") == "<<");
  CHECK(op_in("cat <<'EOF'\nx\nEOF") == "<<");
}

TEST_CASE("shell_syntax: malformed strings are clear errors", "[shell]") {
  CHECK(error_code("echo 'open") == "CRD4006");
  CHECK(error_code("echo \"open") == "CRD4006");
  CHECK(error_code("echo $'open") == "CRD4006");
  CHECK(error_code("") == "CRD4006");
  CHECK(error_code("   \t ") == "CRD4006");
  CHECK(error_code("# nothing") == "CRD4006");
  CHECK_FALSE(find_shell_operator("echo 'open"));
}

TEST_CASE("shell_syntax: the refusal says what to do instead", "[shell]") {
  auto redirect = shell_operator_error(*find_shell_operator("echo x > f"));
  CHECK(redirect.code() == "CRD4001");
  CHECK(redirect.message() ==
        "command string contains the shell operator '>' at offset 7, and process.shell is \"off\"");
  CHECK(redirect.hint().find("file API") != std::string::npos);
  CHECK(redirect.hint().find("sandboxed") != std::string::npos);
  auto pipe = shell_operator_error(*find_shell_operator("a | b"));
  CHECK(pipe.hint().find("separate runs") != std::string::npos);
  auto subst = shell_operator_error(*find_shell_operator("echo $(id)"));
  CHECK(subst.hint().find("pass the value itself") != std::string::npos);
  auto nl = shell_operator_error(*find_shell_operator("a\nb"));
  CHECK(nl.message() ==
        "command string contains a newline at offset 1, which a shell reads as the end of a "
        "command, and process.shell is \"off\"");
  CHECK(nl.hint().find("separate runs") != std::string::npos);
}

TEST_CASE("shell_syntax: a leading variable assignment is shell syntax", "[shell]") {
  // `FOO=1 env` is not the program 'FOO=1': only a shell performs the assignment.
  CHECK(op_in("FOO=1 env") == "FOO=");
  CHECK(find_shell_operator("  _X9=a b")->offset == 2);
  CHECK(op_in("A=") == "A=");
  auto e = shell_operator_error(*find_shell_operator("FOO=1 env"));
  CHECK(e.code() == "CRD4001");
  CHECK(e.message() ==
        "command string starts with the variable assignment 'FOO=...', which only a shell "
        "performs, and process.shell is \"off\"");
  CHECK(e.hint().find("env.set") != std::string::npos);
  CHECK(e.hint().find("\"env\"") != std::string::npos);
  CHECK(error_code("FOO=1 env") == "CRD4001");
  // An assignment later in the command is an argument (env and make take them), and a quoted
  // or non-name word before '=' is no assignment.
  CHECK(split_command("env FOO=1 printenv FOO") == Words{"env", "FOO=1", "printenv", "FOO"});
  CHECK(split_command("make CC=gcc") == Words{"make", "CC=gcc"});
  CHECK(split_command("'FOO=1' x") == Words{"FOO=1", "x"});
  CHECK(split_command("1A=2 x") == Words{"1A=2", "x"});
  CHECK(split_command("./a=b") == Words{"./a=b"});
}

TEST_CASE("shell_syntax: very long input splits in linear time", "[shell]") {
  std::string big;
  for (int i = 0; i < 200000; ++i) big += "word ";
  CHECK(split_command(big).size() == 200000);
  std::string quoted = "'" + std::string(1 << 20, 'x') + "'";
  CHECK(split_command(quoted).front().size() == (1u << 20));
  CHECK(op_in(big + "| x") == "|");
}
