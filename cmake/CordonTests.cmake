# How the Catch2 suites are built and registered with ctest.
include_guard(GLOBAL)
find_package(Catch2 2 REQUIRED)
include(Catch)

# Catch2's implementation is the costliest translation unit of a suite (about 30 s under ASan),
# so it is compiled once per build tree: the runner, for a suite with a main of its own, and the
# standard main on top of it.
add_library(cordon_catch_runner STATIC ${PROJECT_SOURCE_DIR}/tests/support/catch_runner.cpp)
target_link_libraries(cordon_catch_runner PUBLIC Catch2::Catch2)
target_include_directories(cordon_catch_runner PUBLIC ${PROJECT_SOURCE_DIR}/tests/support)
add_library(cordon_catch_main STATIC ${PROJECT_SOURCE_DIR}/tests/support/catch_main.cpp)
target_link_libraries(cordon_catch_main PUBLIC cordon_catch_runner)
foreach(lib cordon_catch_runner cordon_catch_main)
  cordon_warnings(${lib})
  target_compile_options(${lib} PRIVATE $<$<NOT:$<CONFIG:Debug>>:-O0>)
endforeach()

# What every suite's executable gets: the headers nearly every test file parses (Catch2,
# Boost.JSON, the standard library), parsed once per target instead of once per file (a
# sanitized build of the tests in half the time); and, in an optimised build, -O0 as in a debug
# one. Test code need not be fast, builds in less time so, and GCC 12 optimising reports
# out-of-bounds copies in std::string that cannot happen (-Warray-bounds, even at -O1).
function(cordon_test_target target)
  target_precompile_headers(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:<catch2/catch.hpp$<ANGLE-R>>
    $<$<COMPILE_LANGUAGE:CXX>:<boost/json.hpp$<ANGLE-R>>
    $<$<COMPILE_LANGUAGE:CXX>:<algorithm$<ANGLE-R>>
    $<$<COMPILE_LANGUAGE:CXX>:<chrono$<ANGLE-R>>
    $<$<COMPILE_LANGUAGE:CXX>:<filesystem$<ANGLE-R>>
    $<$<COMPILE_LANGUAGE:CXX>:<fstream$<ANGLE-R>>
    $<$<COMPILE_LANGUAGE:CXX>:<functional$<ANGLE-R>>
    $<$<COMPILE_LANGUAGE:CXX>:<map$<ANGLE-R>>
    $<$<COMPILE_LANGUAGE:CXX>:<optional$<ANGLE-R>>
    $<$<COMPILE_LANGUAGE:CXX>:<sstream$<ANGLE-R>>
    $<$<COMPILE_LANGUAGE:CXX>:<string$<ANGLE-R>>
    $<$<COMPILE_LANGUAGE:CXX>:<thread$<ANGLE-R>>
    $<$<COMPILE_LANGUAGE:CXX>:<vector$<ANGLE-R>>)
  target_compile_options(${target} PRIVATE $<$<NOT:$<CONFIG:Debug>>:-O0>)
endfunction()

# Registers one ctest test per `*_test.cpp` source of `target`, named PREFIX + the file's stem:
# the file's cases run in one process, chosen by Catch's file-name tag (-#). Under ASan a suite's
# process takes about 0.3 s to start, more than most cases take, so a test per case cost the
# asan run minutes; a failing file's output still names each failing case. PROPERTIES are set on
# each file's test. One more test fails if a case lies in a file that is not registered.
#
#   cordon_catch_files(cordon-unit-tests "unit: " PROPERTIES TIMEOUT 600)
function(cordon_catch_files target prefix)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "" "PROPERTIES")
  get_target_property(sources ${target} SOURCES)
  set(stems "")
  set(others "")
  foreach(source IN LISTS sources)
    if(NOT source MATCHES "_test\\.cpp$")
      continue()
    endif()
    cmake_path(GET source STEM stem)
    if(stem IN_LIST stems)
      message(FATAL_ERROR "${target}: two test files are named ${stem}.cpp: Catch tags them alike")
    endif()
    list(APPEND stems ${stem})
    string(APPEND others "~[#${stem}]")
    add_test(NAME "${prefix}${stem}" COMMAND ${target} "-#" "[#${stem}]" --warn NoTests)
    if(arg_PROPERTIES)
      set_tests_properties("${prefix}${stem}" PROPERTIES ${arg_PROPERTIES})
    endif()
  endforeach()
  add_test(NAME "${prefix}every case is in a registered file"
           COMMAND ${PROJECT_SOURCE_DIR}/scripts/check-test-files $<TARGET_FILE:${target}> "${others}")
endfunction()
