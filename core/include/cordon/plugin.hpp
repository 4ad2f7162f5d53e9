// The plugin ABI: what a `cordon-backend-<name>.so` exports through Boost.DLL.
//
// Two symbols, both made by CORDON_BACKEND_PLUGIN in the plugin's entry.cpp:
//   cordon_plugin_info    a PluginInfo record, read before anything else is trusted
//   cordon_plugin_create  the factory, called only after the record was accepted
#pragma once

#include <cordon/sdk/backend.hpp>
#include <cordon/sdk/version.hpp>

#include <boost/config.hpp>
#include <boost/dll/alias.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace cordon {

/// The toolchain a translation unit was compiled with. A plugin and the core must agree, since
/// std::string, std::vector and std::function cross the boundary.
#define CORDON_STRINGIFY2(x) #x
#define CORDON_STRINGIFY(x) CORDON_STRINGIFY2(x)
#if defined(__clang__)
#define CORDON_COMPILER "clang-" CORDON_STRINGIFY(__clang_major__)
#elif defined(__GNUC__)
#define CORDON_COMPILER "gcc-" CORDON_STRINGIFY(__GNUC__)
#else
#define CORDON_COMPILER "unknown-compiler"
#endif
#if defined(_GLIBCXX_RELEASE)
#define CORDON_STDLIB "libstdc++-" CORDON_STRINGIFY(_GLIBCXX_RELEASE)
#elif defined(_LIBCPP_VERSION)
#define CORDON_STDLIB "libc++-" CORDON_STRINGIFY(_LIBCPP_VERSION)
#else
#define CORDON_STDLIB "unknown-stdlib"
#endif
#define CORDON_TOOLCHAIN \
  CORDON_COMPILER " " CORDON_STDLIB " boost-" BOOST_LIB_VERSION " sdk-" CORDON_VERSION

/// Plain data, so that the core can read it from any plugin before trusting its C++ layout.
struct PluginInfo {
  std::uint32_t abi_version;  ///< CORDON_PLUGIN_ABI the plugin was built against
  char name[32];              ///< backend name, as in cordon-backend-<name>.so
  char version[32];           ///< the plugin's own version
  char toolchain[160];        ///< CORDON_TOOLCHAIN of the plugin
  Locality locality;          ///< where the backend runs commands (see Locality)
};

/// The factory's signature. Returns nullptr and fills `error` instead of throwing.
using PluginFactory = std::unique_ptr<Backend>(const BackendContext&, std::string& error);

}  // namespace cordon

/// Defines the two exported symbols for backend class `Class` named `NAME` at version `VERSION`,
/// whose commands run at `LOCALITY`: `local` or `remote` (see Locality). Use once, in the
/// plugin's entry.cpp. The factory catches everything.
#define CORDON_BACKEND_PLUGIN(Class, NAME, VERSION, LOCALITY)                            \
  namespace cordon_plugin_entry {                                                        \
  extern "C" BOOST_SYMBOL_EXPORT const ::cordon::PluginInfo cordon_plugin_info;          \
  const ::cordon::PluginInfo cordon_plugin_info = {                                      \
      CORDON_PLUGIN_ABI, NAME, VERSION, CORDON_TOOLCHAIN, ::cordon::Locality::LOCALITY}; \
  std::unique_ptr<::cordon::Backend> create(const ::cordon::BackendContext& ctx,         \
                                            std::string& error) {                        \
    try {                                                                                \
      return std::unique_ptr<::cordon::Backend>(new Class(ctx));                         \
    } catch (const std::exception& e) {                                                  \
      error = e.what();                                                                  \
    } catch (...) {                                                                      \
      error = "unknown exception";                                                       \
    }                                                                                    \
    return nullptr;                                                                      \
  }                                                                                      \
  }                                                                                      \
  BOOST_DLL_ALIAS(cordon_plugin_entry::create, cordon_plugin_create)
