// The command's output on the operator's terminal: its bytes are shown, never obeyed.
//
// A sandboxed command's escape sequences would otherwise act on the terminal cordon runs in:
// OSC 52 writes the clipboard, OSC 0 retitles the window, cursor and erase sequences rewrite
// what cordon printed (its report, its refusals). On a terminal every control byte but tab,
// newline, carriage return and backspace is written as visible text ("\x1b"), and so are the
// C1 controls (U+0080..U+009F), which some terminals obey as 8-bit CSI and OSC. Pipes, files
// and --json get the bytes exactly; `--raw` asks for them on a terminal too.
#pragma once

#include <cordon/sdk/export.hpp>

#include <string>
#include <string_view>

namespace cordon {

/// Neutralises control sequences in a stream that arrives in chunks.
class CORDON_API TerminalText {
 public:
  /// `chunk` as it is safe to write to a terminal. A UTF-8 lead byte at the end of a chunk is
  /// held back until the next one says what it starts.
  std::string filter(std::string_view chunk);
  /// Whatever was held back, at the end of the stream.
  std::string finish();

 private:
  std::string pending_;
};

/// True when `fd` is a terminal.
CORDON_API bool is_terminal(int fd) noexcept;

}  // namespace cordon
