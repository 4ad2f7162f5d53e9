// Tests of TerminalText: a command's control sequences shown, never obeyed, on a terminal.
#include <catch2/catch.hpp>
#include <cordon/terminal_text.hpp>

using namespace cordon;

TEST_CASE("terminal_text: escape sequences become visible text", "[terminal]") {
  TerminalText t;
  // OSC 52 (clipboard), a title change, a screen clear, and 8-bit CSI as UTF-8 (U+009B).
  CHECK(t.filter("\x1b]52;c;aGk=\x07") == "\\x1b]52;c;aGk=\\x07");
  CHECK(t.filter("\x1b]0;owned\x1b\\") == "\\x1b]0;owned\\x1b\\");
  CHECK(t.filter("\x1b[2J\x1b[H") == "\\x1b[2J\\x1b[H");
  CHECK(t.filter("a\xc2\x9b"
                 "31mb") == "a\\xc2\\x9b31mb");
  CHECK(t.filter(std::string("nul\0del\x7f", 8)) == "nul\\x00del\\x7f");
}

TEST_CASE("terminal_text: text, UTF-8 and layout controls pass unchanged", "[terminal]") {
  TerminalText t;
  CHECK(t.filter("plain text\n") == "plain text\n");
  CHECK(t.filter("tab\there\r\n") == "tab\there\r\n");
  CHECK(t.filter("progress 10%\rprogress 20%\b") == "progress 10%\rprogress 20%\b");
  CHECK(t.filter("h\xc3\xa9llo \xe2\x9c\x93 \xc2\xa0") == "h\xc3\xa9llo \xe2\x9c\x93 \xc2\xa0");
  CHECK(t.finish().empty());
}

TEST_CASE("terminal_text: a C1 control split across chunks is still caught", "[terminal]") {
  TerminalText t;
  CHECK(t.filter("x\xc2") == "x");
  CHECK(t.filter("\x9d"
                 "0;t") == "\\xc2\\x9d0;t");
  CHECK(t.filter("\xc2") == "");
  CHECK(t.filter("\xa9") == "\xc2\xa9");  // an ordinary two-byte character across the split
  CHECK(t.filter("\xc2") == "");
  CHECK(t.finish() == "\\xc2");  // a lone lead byte at the end is shown, not dropped
}
