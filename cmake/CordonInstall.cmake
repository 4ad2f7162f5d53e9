# Installs the cordon executable, the core library and the SDK (headers + CMake package), so
# that a third party can build a plugin out of tree:
#
#   find_package(cordon 0.1 REQUIRED)
#   cordon_add_backend(NAME mine SOURCES mine.cpp entry.cpp)
include(CMakePackageConfigHelpers)

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
install(DIRECTORY ${PROJECT_SOURCE_DIR}/core/include/cordon DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.hpp")
install(FILES ${PROJECT_BINARY_DIR}/core/include/cordon/version.hpp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cordon)
install(EXPORT cordonTargets NAMESPACE cordon:: DESTINATION ${CORDON_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/cordonConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cordonConfig.cmake
  INSTALL_DESTINATION ${CORDON_INSTALL_CMAKEDIR}
  PATH_VARS CORDON_INSTALL_PLUGIN_DIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cordonConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cordonConfig.cmake ${PROJECT_BINARY_DIR}/cordonConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/CordonBackend.cmake ${PROJECT_SOURCE_DIR}/cmake/CordonWarnings.cmake
  DESTINATION ${CORDON_INSTALL_CMAKEDIR})
# The plugin directory exists even before any plugin is installed into it.
install(DIRECTORY DESTINATION ${CORDON_INSTALL_PLUGIN_DIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/policies/ DESTINATION ${CMAKE_INSTALL_DATADIR}/cordon/policies)
install(FILES ${PROJECT_SOURCE_DIR}/config/defaults.toml DESTINATION ${CMAKE_INSTALL_DATADIR}/cordon)
install(FILES ${PROJECT_SOURCE_DIR}/docs/writing-a-backend.md
  DESTINATION ${CMAKE_INSTALL_DOCDIR} OPTIONAL)
