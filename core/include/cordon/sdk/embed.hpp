// A file built alongside a backend, carried inside it: a helper program it starts (a waiter in a
// container, a sandbox's first process) needs no installed file that could go missing or be
// replaced. The bytes come in with the assembler's .incbin at build time; CMake passes the
// file's absolute path as a macro and makes the object depend on it (OBJECT_DEPENDS).
#pragma once

#include <cstddef>
#include <string_view>

/// At namespace scope of one source file: embeds the file at PATH (a string literal, usually a
/// macro set by CMake) in the object's read-only data, 16-byte aligned, and defines
/// `std::string_view NAME() noexcept`, which returns its bytes. NAME is also the stem of two
/// local symbols (NAME_begin, NAME_end), so it must be unique within the source file.
#define CORDON_EMBED_FILE(NAME, PATH)                                           \
  asm(".section .rodata\n"                                                      \
      ".balign 16\n" #NAME                                                      \
      "_begin:\n"                                                               \
      ".incbin \"" PATH "\"\n" #NAME                                            \
      "_end:\n"                                                                 \
      ".previous\n");                                                           \
  extern "C" const char NAME##_begin[];                                         \
  extern "C" const char NAME##_end[];                                           \
  [[maybe_unused]] static std::string_view NAME() noexcept {                    \
    return {NAME##_begin, static_cast<std::size_t>(NAME##_end - NAME##_begin)}; \
  }
