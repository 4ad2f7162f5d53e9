# cordon_check_toolchain(): stops the configuration of a project that uses the installed SDK with
# a compiler (id or major version) or a Boost (major.minor) other than those that built it.
# cordon would refuse to load such a plugin anyway (CRD3004, "plugin toolchain mismatch"); this
# says so before anything is built. The standard library is only named here: the loader checks it.
#
# cordonConfig.cmake sets the cordon_SDK_* variables, finds Boost, then calls this.
function(cordon_check_toolchain)
  set(sdk "${cordon_SDK_CXX_COMPILER_ID} ${cordon_SDK_CXX_COMPILER_MAJOR}")
  string(APPEND sdk " (${cordon_SDK_CXX_STDLIB}) and Boost ${cordon_SDK_BOOST_VERSION}")
  if(NOT CMAKE_CXX_COMPILER_ID)
    message(FATAL_ERROR "cordon: enable C++ (project(... LANGUAGES CXX)) before "
                        "find_package(cordon); the SDK was built with ${sdk}")
  endif()
  string(REGEX MATCH "^[0-9]+" major "${CMAKE_CXX_COMPILER_VERSION}")
  string(REGEX MATCH "^[0-9]+\\.[0-9]+" boost "${Boost_VERSION}")
  string(REGEX MATCH "^[0-9]+\\.[0-9]+" sdk_boost "${cordon_SDK_BOOST_VERSION}")
  set(here "${CMAKE_CXX_COMPILER_ID} ${major} (${CMAKE_CXX_COMPILER}) and Boost ${Boost_VERSION}")
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL cordon_SDK_CXX_COMPILER_ID
     OR NOT major STREQUAL cordon_SDK_CXX_COMPILER_MAJOR OR NOT boost STREQUAL sdk_boost)
    message(FATAL_ERROR
      "cordon: toolchain mismatch: the cordon SDK at ${cordon_DIR} was built with ${sdk}; this "
      "project uses ${here}. cordon loads only plugins built with the compiler (id and major "
      "version), standard library and Boost (major.minor) that built it, and would refuse this "
      "one (CRD3004). Configure with that compiler (-DCMAKE_CXX_COMPILER=...) and Boost "
      "(-DBoost_DIR=...), or build cordon with yours.")
  endif()
endfunction()
