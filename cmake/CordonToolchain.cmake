# The toolchain this build of cordon uses, as the installed SDK records it (cordonConfig.cmake):
#
#   CORDON_SDK_CXX_COMPILER_ID     GNU, Clang, ...
#   CORDON_SDK_CXX_COMPILER_MAJOR  the compiler's major version
#   CORDON_SDK_CXX_STDLIB          libstdc++-<release> or libc++-<version>, as plugin.hpp names it
#   CORDON_SDK_BOOST_VERSION       the Boost that find_package(Boost) found
#   CORDON_SDK_BOOST_MAJOR_MINOR   its major.minor, which the plugin's Boost must match
#
# A plugin must be built with the same (cordon/plugin.hpp, CORDON_TOOLCHAIN): std::string,
# std::vector and boost::json::object cross the plugin boundary.
set(CORDON_SDK_CXX_COMPILER_ID ${CMAKE_CXX_COMPILER_ID})
string(REGEX MATCH "^[0-9]+" CORDON_SDK_CXX_COMPILER_MAJOR "${CMAKE_CXX_COMPILER_VERSION}")
set(CORDON_SDK_BOOST_VERSION ${Boost_VERSION})
string(REGEX MATCH "^[0-9]+\\.[0-9]+" CORDON_SDK_BOOST_MAJOR_MINOR "${Boost_VERSION}")

# The standard library's own macros, from the preprocessor (GCC and Clang, which cordon supports).
set(CORDON_SDK_CXX_STDLIB "unknown-stdlib")
execute_process(
  COMMAND ${CMAKE_CXX_COMPILER} -std=c++20 -E -dM -x c++ -
  INPUT_FILE ${CMAKE_CURRENT_LIST_DIR}/stdlib-probe.hpp
  OUTPUT_VARIABLE _cordon_macros ERROR_QUIET RESULT_VARIABLE _cordon_rc)
if(_cordon_rc EQUAL 0 AND _cordon_macros MATCHES "#define _GLIBCXX_RELEASE ([0-9]+)")
  set(CORDON_SDK_CXX_STDLIB "libstdc++-${CMAKE_MATCH_1}")
elseif(_cordon_rc EQUAL 0 AND _cordon_macros MATCHES "#define _LIBCPP_VERSION ([0-9]+)")
  set(CORDON_SDK_CXX_STDLIB "libc++-${CMAKE_MATCH_1}")
endif()
unset(_cordon_macros)
unset(_cordon_rc)
