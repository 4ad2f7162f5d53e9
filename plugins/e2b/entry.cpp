// The plugin's exported symbols.
#include <cordon/sdk/plugin.hpp>

#include "e2b_backend.hpp"

CORDON_BACKEND_PLUGIN(cordon::e2b::E2bBackend, "e2b", "0.1.0", remote)
