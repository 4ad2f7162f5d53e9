// Command strings without a shell: POSIX word splitting and shell-operator detection. Pure.
//
// An agent that writes `echo x > f` expects a redirect. A plain executor would pass `>` as a
// literal argument and report success; cordon instead refuses the string (shell = "off"), or
// hands it to /bin/sh inside the sandbox when the policy asks for a shell by name.
#pragma once

#include <cordon/sdk/error.hpp>
#include <cordon/sdk/export.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cordon {

/// A shell operator found in a command string, and where (byte offset, 0-based).
struct ShellOperator {
  std::string text;  ///< "|", "&&", ">>", "$(", "`", "newline", "${", "$NAME", "NAME=", ...
  std::size_t offset = 0;
  bool operator==(const ShellOperator&) const = default;
};

/// The first shell construct that a plain word splitter would pass through as literal text:
/// | || & && ; < > >> << <( >( $( ` newline outside quotes, and $( ` ${ $NAME inside double
/// quotes as well (the shell expands those there); and a leading variable assignment
/// (`FOO=1 env`), reported as "FOO=". Inside single quotes nothing counts.
CORDON_API std::optional<ShellOperator> find_shell_operator(std::string_view text);

/// Splits a command string into words by POSIX rules: blanks separate words; backslash escapes;
/// '...' is literal; "..." keeps \ only before $ ` " \ and newline; $'...' decodes C escapes;
/// a word starting with # begins a comment. Never runs a shell.
/// Throws Error CRD4001 when the string holds a shell operator (naming it and what to do
/// instead), CRD4006 for an unterminated quote or an empty command.
CORDON_API std::vector<std::string> split_command(std::string_view text);

/// The CRD4001 error for an operator found in `text`: what was found, and what to do instead.
CORDON_API Error shell_operator_error(const ShellOperator& op);

}  // namespace cordon
