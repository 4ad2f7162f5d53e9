// TerminalText: control bytes and C1 controls written as "\xNN".
#include <cordon/terminal_text.hpp>

#include <unistd.h>

#include <cstdio>

namespace cordon {

namespace {

void escaped(std::string& out, unsigned char c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02x", c);
  out += buf;
}

bool harmless_control(unsigned char c) { return c == '\t' || c == '\n' || c == '\r' || c == '\b'; }

}  // namespace

std::string TerminalText::filter(std::string_view chunk) {
  std::string in = pending_;
  in.append(chunk);
  pending_.clear();
  std::string out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    auto c = static_cast<unsigned char>(in[i]);
    if (c == 0xc2 && i + 1 == in.size()) {
      pending_ = "\xc2";  // a C1 control may follow in the next chunk
      break;
    }
    if (c == 0xc2 && static_cast<unsigned char>(in[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(in[i + 1]) <= 0x9f) {
      escaped(out, c);
      escaped(out, static_cast<unsigned char>(in[++i]));
    } else if ((c < 0x20 && !harmless_control(c)) || c == 0x7f) {
      escaped(out, c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string TerminalText::finish() {
  std::string out;
  for (unsigned char c : pending_) escaped(out, c);
  pending_.clear();
  return out;
}

bool is_terminal(int fd) noexcept { return ::isatty(fd) == 1; }

}  // namespace cordon
