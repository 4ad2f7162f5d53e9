// The plugin's exported symbols.
#include <cordon/sdk/plugin.hpp>

#include "docker_backend.hpp"

CORDON_BACKEND_PLUGIN(cordon::docker::DockerBackend, "docker", "0.1.0", local)
