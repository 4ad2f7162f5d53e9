// Command strings without a shell: one scanner that splits words and stops at shell operators.
#include <cordon/shell_syntax.hpp>

#include <cctype>

namespace cordon {

namespace {

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_special_param(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) ||
         std::string_view("@*#?$!-").find(c) != std::string_view::npos;
}

// The operator starting with `c` at `i` outside quotes (c is one of | & ; < > ( )).
std::string unquoted_operator(std::string_view t, std::size_t i) {
  char c = t[i];
  char n = i + 1 < t.size() ? t[i + 1] : '\0';
  switch (c) {
    case '|':
      return n == '|' ? "||" : "|";
    case '&':
      return n == '&' ? "&&" : (n == '>' ? "&>" : "&");
    case ';':
      return n == ';' ? ";;" : ";";
    case '<':
      if (n == '<') return i + 2 < t.size() && t[i + 2] == '<' ? "<<<" : "<<";
      if (n == '(' || n == '&' || n == '>') return std::string("<") + n;
      return "<";
    case '>':
      if (n == '>' || n == '(' || n == '&' || n == '|') return std::string(">") + n;
      return ">";
    default:
      return std::string(1, c);
  }
}

// `$...` that a shell would expand, or nullopt for a literal dollar. i points at '$'.
std::optional<std::string> dollar_expansion(std::string_view t, std::size_t i) {
  if (i + 1 >= t.size()) return std::nullopt;
  char n = t[i + 1];
  if (n == '(') return "$(";
  if (n == '{') return "${";
  if (n == '[') return "$[";
  if (is_special_param(n)) return std::string("$") + n;
  if (is_name_start(n)) {
    std::size_t j = i + 1;
    while (j < t.size() && (is_name_start(t[j]) || std::isdigit(static_cast<unsigned char>(t[j]))))
      ++j;
    return std::string(t.substr(i, j - i));
  }
  return std::nullopt;
}

// `NAME=` at i, the start of a command's first word: a shell reads it as a variable assignment
// for the command, not as the program to run. nullopt otherwise.
std::optional<std::string> assignment(std::string_view t, std::size_t i) {
  if (i >= t.size() || !is_name_start(t[i])) return std::nullopt;
  std::size_t j = i + 1;
  while (j < t.size() && (is_name_start(t[j]) || std::isdigit(static_cast<unsigned char>(t[j]))))
    ++j;
  if (j >= t.size() || t[j] != '=') return std::nullopt;
  return std::string(t.substr(i, j + 1 - i));
}

// Decodes one escape of $'...' at t[i] == '\\'; returns the bytes and advances i past it.
std::string ansi_c_escape(std::string_view t, std::size_t& i) {
  ++i;  // the backslash
  if (i >= t.size()) return "\\";
  char c = t[i++];
  switch (c) {
    case 'n':
      return "\n";
    case 't':
      return "\t";
    case 'r':
      return "\r";
    case 'a':
      return "\a";
    case 'b':
      return "\b";
    case 'e':
    case 'E':
      return "\x1b";
    case 'f':
      return "\f";
    case 'v':
      return "\v";
    case 'x': {
      int v = 0, n = 0;
      while (n < 2 && i < t.size() && std::isxdigit(static_cast<unsigned char>(t[i]))) {
        v = v * 16 + (std::isdigit(static_cast<unsigned char>(t[i]))
                          ? t[i] - '0'
                          : (std::tolower(t[i]) - 'a' + 10));
        ++i, ++n;
      }
      return n ? std::string(1, static_cast<char>(v)) : "\\x";
    }
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7': {
      int v = c - '0', n = 1;
      while (n < 3 && i < t.size() && t[i] >= '0' && t[i] <= '7') v = v * 8 + (t[i++] - '0'), ++n;
      return std::string(1, static_cast<char>(v & 0xff));
    }
    default:
      return std::string(1, c);  // \\ \' \" \? and unknown escapes
  }
}

// Scans `t`. Stops at the first operator (returned); otherwise fills `words`.
class Scanner {
 public:
  explicit Scanner(std::string_view t) : t_(t) {}

  std::optional<ShellOperator> run(std::vector<std::string>& words) {
    while (i_ < t_.size()) {
      if (auto op = step()) return op;
    }
    if (quote_) throw unterminated();
    end_word(words_);
    words = std::move(words_);
    return std::nullopt;
  }

 private:
  std::optional<ShellOperator> step() {
    if (quote_ == '\'') return single_quoted();
    if (quote_ == '"') return double_quoted();
    if (quote_ == '$') return ansi_c_quoted();
    return unquoted();
  }

  std::optional<ShellOperator> unquoted() {
    char c = t_[i_];
    if (c == ' ' || c == '\t') return end_word(words_), ++i_, std::nullopt;
    if (c == '\n' || c == '\r') {
      if (t_.find_first_not_of(" \t\r\n", i_) == std::string_view::npos)
        return i_ = t_.size(), std::nullopt;
      return ShellOperator{"newline", i_};
    }
    if (c == '#' && !in_word_) return skip_comment(), std::nullopt;
    if (!in_word_ && words_.empty())
      if (auto a = assignment(t_, i_)) return ShellOperator{*a, i_};
    if (std::string_view("|&;<>()").find(c) != std::string_view::npos)
      return ShellOperator{unquoted_operator(t_, i_), i_};
    if (c == '`') return ShellOperator{"`", i_};
    if (c == '\\') return escape_unquoted(), std::nullopt;
    if (c == '\'' || c == '"') return quote_ = c, in_word_ = true, ++i_, std::nullopt;
    if (c == '$') {
      if (i_ + 1 < t_.size() && t_[i_ + 1] == '\'')
        return quote_ = '$', in_word_ = true, i_ += 2, std::nullopt;
      if (auto e = dollar_expansion(t_, i_)) return ShellOperator{*e, i_};
    }
    word_ += c, in_word_ = true, ++i_;
    return std::nullopt;
  }

  std::optional<ShellOperator> single_quoted() {
    if (t_[i_] == '\'')
      quote_ = 0;
    else
      word_ += t_[i_];
    ++i_;
    return std::nullopt;
  }

  std::optional<ShellOperator> double_quoted() {
    char c = t_[i_];
    if (c == '"') return quote_ = 0, ++i_, std::nullopt;
    if (c == '`') return ShellOperator{"`", i_};
    if (c == '$')
      if (auto e = dollar_expansion(t_, i_)) return ShellOperator{*e, i_};
    if (c == '\\' && i_ + 1 < t_.size() &&
        std::string_view("$`\"\\\n").find(t_[i_ + 1]) != std::string_view::npos) {
      if (t_[i_ + 1] != '\n') word_ += t_[i_ + 1];
      i_ += 2;
      return std::nullopt;
    }
    word_ += c, ++i_;
    return std::nullopt;
  }

  std::optional<ShellOperator> ansi_c_quoted() {
    if (t_[i_] == '\'') return quote_ = 0, ++i_, std::nullopt;
    if (t_[i_] == '\\') return word_ += ansi_c_escape(t_, i_), std::nullopt;
    word_ += t_[i_++];
    return std::nullopt;
  }

  void escape_unquoted() {
    if (i_ + 1 >= t_.size()) {  // a trailing backslash stands for itself
      word_ += '\\', in_word_ = true, ++i_;
      return;
    }
    if (t_[i_ + 1] != '\n') word_ += t_[i_ + 1], in_word_ = true;  // backslash-newline joins lines
    i_ += 2;
  }

  void skip_comment() {
    while (i_ < t_.size() && t_[i_] != '\n') ++i_;
  }

  void end_word(std::vector<std::string>& words) {
    if (in_word_) words.push_back(std::move(word_));
    word_.clear();
    in_word_ = false;
  }

  Error unterminated() const {
    const char* what = quote_ == '"' ? "double quote" : "single quote";
    return Error(code::kBadRequest, std::string("unterminated ") + what + " in command string",
                 "close the quote, or pass the arguments as an argv array");
  }

  std::string_view t_;
  std::size_t i_ = 0;
  char quote_ = 0;  // 0, '\'', '"', or '$' for $'...'
  bool in_word_ = false;
  std::string word_;
  std::vector<std::string> words_;
};

bool is_redirect(const std::string& op) {
  return op.find_first_of("<>") != std::string::npos && op != "<(" && op != ">(";
}
bool is_assignment(const std::string& op) { return op.size() > 1 && op.back() == '='; }
bool is_expansion(const std::string& op) {
  return op[0] == '$' || op == "`" || op == "<(" || op == ">(";
}

}  // namespace

std::optional<ShellOperator> find_shell_operator(std::string_view text) {
  std::vector<std::string> words;
  try {
    return Scanner(text).run(words);
  } catch (const Error&) {
    return std::nullopt;  // unterminated quotes are split_command's error, not an operator
  }
}

Error shell_operator_error(const ShellOperator& op) {
  const std::string at = " at offset " + std::to_string(op.offset);
  const std::string tail = ", and process.shell is \"off\"";
  const std::string ask = ", or ask the operator for process.shell = \"sandboxed\"";
  if (is_assignment(op.text))
    return Error(code::kShellOperator,
                 "command string starts with the variable assignment '" + op.text +
                     "...', which only a shell performs" + tail,
                 "set variables with the policy's env.set, or the request's \"env\" for names "
                 "env.pass grants" +
                     ask);
  if (op.text == "newline")
    return Error(code::kShellOperator,
                 "command string contains a newline" + at +
                     ", which a shell reads as the end of "
                     "a command" +
                     tail,
                 "split the command into separate runs, one program each" + ask);
  const std::string shown = "'" + op.text + "'";
  std::string hint;
  if (is_expansion(op.text))
    hint = "nothing expands " + shown + " without a shell: pass the value itself as an argument";
  else if (is_redirect(op.text))
    hint = "write files with the file API ('cordon fs write') instead of a redirect";
  else
    hint = "split the command into separate runs, one program each";
  return Error(code::kShellOperator,
               "command string contains the shell operator " + shown + at + tail, hint + ask);
}

std::vector<std::string> split_command(std::string_view text) {
  std::vector<std::string> words;
  if (auto op = Scanner(text).run(words)) throw shell_operator_error(*op);
  if (words.empty())
    throw Error(code::kBadRequest, "empty command string", "give a program to run");
  return words;
}

}  // namespace cordon
