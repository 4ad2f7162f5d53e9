// The plugin's exported symbols.
#include <cordon/sdk/plugin.hpp>

#include "seatbelt_backend.hpp"

CORDON_BACKEND_PLUGIN(cordon::seatbelt::SeatbeltBackend, "seatbelt", "0.1.0", local)
