# Installs the cordon executable, the core library and the SDK (headers + CMake package).
include(CMakePackageConfigHelpers)

install(TARGETS cordon RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS cordon_core cordon_sdk EXPORT cordonTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/core/include/cordon DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.hpp")
install(FILES ${PROJECT_BINARY_DIR}/core/include/cordon/version.hpp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cordon)
install(EXPORT cordonTargets NAMESPACE cordon:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cordon)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/cordonConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cordonConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cordon)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cordonConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cordonConfig.cmake ${PROJECT_BINARY_DIR}/cordonConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/CordonBackend.cmake ${PROJECT_SOURCE_DIR}/cmake/CordonWarnings.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cordon)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/policies/ DESTINATION ${CMAKE_INSTALL_DATADIR}/cordon/policies)
