// A command as the caller gives it: arguments that may be marked untrusted. Pure.
#pragma once

#include <cordon/sdk/error.hpp>
#include <cordon/sdk/export.hpp>

#include <string>
#include <vector>

namespace cordon {

/// One argument. `untrusted` marks a value that came from outside (a model, a user, a
/// request): it may not pose as a flag and may not carry control characters.
struct Argument {
  std::string value;
  bool untrusted = false;
  bool operator==(const Argument&) const = default;
};

/// A trusted argument (the caller's own).
inline Argument trusted(std::string v) { return Argument{std::move(v), false}; }
/// An untrusted argument (from a model, a user, a request).
inline Argument untrusted(std::string v) { return Argument{std::move(v), true}; }

/// Checks every argument and returns the plain argv. Throws Error:
/// CRD4002 an untrusted value starting with '-' (naming its position, 0 = the program), unless
/// a trusted "--" argument came before it (then the program reads it as an operand);
/// CRD4003 a NUL byte in any argument, or a control character other than tab in an untrusted
/// one; CRD4006 an empty argument vector or an empty program.
CORDON_API std::vector<std::string> checked_argv(const std::vector<Argument>& args);

}  // namespace cordon
