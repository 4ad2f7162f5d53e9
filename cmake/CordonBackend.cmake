# cordon_add_backend(NAME <name> SOURCES <files...> [LIBRARIES <libs...>])
#
# Builds cordon-backend-<name>.so, a MODULE library against cordon::sdk, with hidden symbols
# (the entry macro exports the two plugin symbols). Inside the cordon tree the plugin lands in
# the build tree's plugin directory and installs to <libdir>/cordon/plugins; out of tree it
# lands in the caller's binary directory and installs to the caller's <libdir>/cordon/plugins.
include(GNUInstallDirs)

function(cordon_add_backend)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;LIBRARIES" ${ARGN})
  if(NOT ARG_NAME)
    message(FATAL_ERROR "cordon_add_backend: NAME is required")
  endif()
  if(NOT ARG_NAME MATCHES "^[a-z0-9][a-z0-9_-]*$" OR ARG_NAME MATCHES "^.................................")
    message(FATAL_ERROR "cordon_add_backend: NAME '${ARG_NAME}' must be 1 to 31 of a-z, 0-9, _ and -")
  endif()
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "cordon_add_backend: SOURCES is required")
  endif()
  set(target cordon-backend-${ARG_NAME})
  add_library(${target} MODULE ${ARG_SOURCES})
  # No run-time search path at all: the plugin's libcordon-core is the one already loaded by
  # the host (matched by soname), and an empty search-path entry would mean the working
  # directory.
  set_target_properties(${target} PROPERTIES PREFIX "" CXX_VISIBILITY_PRESET hidden
                                             VISIBILITY_INLINES_HIDDEN ON
                                             BUILD_WITH_INSTALL_RPATH ON)
  target_compile_features(${target} PRIVATE cxx_std_20)
  # A symbol the plugin uses but nothing provides fails the link, not the first dlopen.
  target_link_options(${target} PRIVATE -Wl,--no-undefined)
  if(TARGET cordon_core)
    target_link_libraries(${target} PRIVATE cordon_sdk ${ARG_LIBRARIES})
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CORDON_BUILD_PLUGIN_DIR})
    install(TARGETS ${target} LIBRARY DESTINATION ${CORDON_INSTALL_PLUGIN_DIR})
    cordon_warnings(${target})
    # What `make run` builds with the executables (cordon-programs, in the top CMakeLists.txt).
    set_property(GLOBAL APPEND PROPERTY CORDON_BACKEND_TARGETS ${target})
  else()
    target_link_libraries(${target} PRIVATE cordon::sdk ${ARG_LIBRARIES})
    install(TARGETS ${target} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/cordon/plugins)
    target_compile_options(${target} PRIVATE -Wall -Wextra)
  endif()
endfunction()
