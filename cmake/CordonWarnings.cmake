# Every cordon target: all warnings, and every warning is an error.
function(cordon_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror)
  # GCC 12 at -O2 reports string concatenation (`":" + std::to_string(n)`) as overlapping
  # memcpy (GCC bug 105329); the diagnostic is wrong, so it is off there.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE -Wno-restrict)
  endif()
endfunction()
