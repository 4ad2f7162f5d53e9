// The plugin's exported symbols.
#include <cordon/sdk/plugin.hpp>

#include "ssh_backend.hpp"

CORDON_BACKEND_PLUGIN(cordon::ssh::SshBackend, "ssh", "0.1.0", remote)
