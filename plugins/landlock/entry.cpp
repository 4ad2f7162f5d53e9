// The plugin's exported symbols.
#include <cordon/sdk/plugin.hpp>

#include <string_view>

#include "landlock_backend.hpp"

// The version is a literal here: the record holds it in a fixed-size array.
CORDON_BACKEND_PLUGIN(cordon::landlock::LandlockBackend, "landlock", "0.1.0", local)
static_assert(std::string_view(cordon::landlock::kVersion) == "0.1.0");
