// toml++ as cordon includes it (compiled in, header-only). Its internal checks are neither
// aborts (debug builds) nor optimiser assumptions (release builds, where toml++ turns them into
// __builtin_assume): toml++ 3.3 asserts a state that its own error path then handles — a table
// header "[#]" reaches parse_key with '#' — so as an assumption it would be undefined behaviour
// on a malformed policy, and as an assert a crash. The parser reports the error either way.
#pragma once

#pragma push_macro("NDEBUG")
#undef NDEBUG
#define TOML_ASSERT(expr) static_assert(true)
#include <toml++/toml.h>
#pragma pop_macro("NDEBUG")
