# cordon_add_backend(NAME <name> SOURCES <files...> [LIBRARIES <libs...>])
# Builds cordon-backend-<name>.so as a MODULE library against cordon::sdk.
# Inside the cordon tree the plugin lands in the build tree's plugin directory and is installed
# to lib/cordon/plugins; out of tree it lands in the caller's binary directory.
function(cordon_add_backend)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;LIBRARIES" ${ARGN})
  if(NOT ARG_NAME)
    message(FATAL_ERROR "cordon_add_backend: NAME is required")
  endif()
  set(target cordon-backend-${ARG_NAME})
  add_library(${target} MODULE ${ARG_SOURCES})
  set_target_properties(${target} PROPERTIES PREFIX "" CXX_VISIBILITY_PRESET hidden
                                             VISIBILITY_INLINES_HIDDEN ON)
  if(TARGET cordon_core)
    target_link_libraries(${target} PRIVATE cordon_sdk ${ARG_LIBRARIES})
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CORDON_BUILD_PLUGIN_DIR})
    install(TARGETS ${target} LIBRARY DESTINATION ${CORDON_INSTALL_PLUGIN_DIR})
  else()
    target_link_libraries(${target} PRIVATE cordon::sdk ${ARG_LIBRARIES})
  endif()
  cordon_warnings(${target})
endfunction()
