# Installs the cordon executable, the core library and the SDK (headers + CMake package), so
# that a third party can build a plugin out of tree:
#
#   find_package(cordon 0.1 REQUIRED)
#   cordon_add_backend(NAME mine SOURCES mine.cpp entry.cpp)
include(CMakePackageConfigHelpers)
include(CordonToolchain)

set(CORDON_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/cordon)

# A plugin needs C++20 whether or not it uses cordon_add_backend().
target_compile_features(cordon_sdk INTERFACE cxx_std_20)
# Only the core library built here (not an installed copy) searches the build tree's plugins.

# Exported as cordon::core and cordon::sdk, the names used inside this tree too.
set_target_properties(cordon_core PROPERTIES EXPORT_NAME core)
set_target_properties(cordon_sdk PROPERTIES EXPORT_NAME sdk)

install(TARGETS cordon_policy_yaml LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/cordon)
install(TARGETS cordon_core cordon_sdk EXPORT cordonTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# Every public header but those only cordon's own programs include (CORDON_PROGRAM_HEADERS).
set(CORDON_PROGRAM_HEADER_PATTERNS)
foreach(header IN LISTS CORDON_PROGRAM_HEADERS)
  list(APPEND CORDON_PROGRAM_HEADER_PATTERNS PATTERN ${header} EXCLUDE)
endforeach()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/core/include/cordon DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.hpp" ${CORDON_PROGRAM_HEADER_PATTERNS})
install(FILES ${PROJECT_BINARY_DIR}/core/include/cordon/sdk/version.hpp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cordon/sdk)
install(EXPORT cordonTargets NAMESPACE cordon:: DESTINATION ${CORDON_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/cordonConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cordonConfig.cmake
  INSTALL_DESTINATION ${CORDON_INSTALL_CMAKEDIR}
  PATH_VARS CORDON_INSTALL_PLUGIN_DIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cordonConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cordonConfig.cmake ${PROJECT_BINARY_DIR}/cordonConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/CordonBackend.cmake ${PROJECT_SOURCE_DIR}/cmake/CordonWarnings.cmake
  ${PROJECT_SOURCE_DIR}/cmake/CordonToolchainCheck.cmake
  DESTINATION ${CORDON_INSTALL_CMAKEDIR})
# The plugin directory exists even before any plugin is installed into it.
install(DIRECTORY DESTINATION ${CORDON_INSTALL_PLUGIN_DIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/policies/ DESTINATION ${CMAKE_INSTALL_DATADIR}/cordon/policies)
install(FILES ${PROJECT_SOURCE_DIR}/config/defaults.toml DESTINATION ${CMAKE_INSTALL_DATADIR}/cordon)
# The plugin author's documentation, and the tested example plugin it builds on
# (tests/fixtures/external-backend without its test script), as share/doc/cordon/example-backend.
install(FILES ${PROJECT_SOURCE_DIR}/docs/writing-a-backend.md
  ${PROJECT_SOURCE_DIR}/docs/architecture.md ${PROJECT_SOURCE_DIR}/docs/certify.md
  DESTINATION ${CMAKE_INSTALL_DOCDIR})
set(CORDON_EXAMPLE_BACKEND_DIR ${PROJECT_SOURCE_DIR}/tests/fixtures/external-backend)
install(FILES
  ${CORDON_EXAMPLE_BACKEND_DIR}/CMakeLists.txt ${CORDON_EXAMPLE_BACKEND_DIR}/README.md
  ${CORDON_EXAMPLE_BACKEND_DIR}/entry.cpp ${CORDON_EXAMPLE_BACKEND_DIR}/external_backend.cpp
  ${CORDON_EXAMPLE_BACKEND_DIR}/external_backend.hpp ${CORDON_EXAMPLE_BACKEND_DIR}/policy.toml
  DESTINATION ${CMAKE_INSTALL_DOCDIR}/example-backend)
