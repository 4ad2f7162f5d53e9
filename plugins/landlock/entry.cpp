// The plugin's exported symbols.
#include <cordon/plugin.hpp>

#include "landlock_backend.hpp"

CORDON_BACKEND_PLUGIN(cordon::landlock::LandlockBackend, "landlock", "0.1.0")
