// Locations of the programs the escape suite drives.
#include "probes.hpp"

#include <cstdlib>

namespace escape {
namespace {

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

}  // namespace

std::string cordon_cli() { return env_or("CORDON_ESCAPE_CLI", CORDON_CLI); }

std::string probe_dir() { return CORDON_ESCAPE_PROBE_DIR; }

std::string probe(const std::string& name) { return probe_dir() + "/" + name; }

std::string backend_name() { return env_or("CORDON_ESCAPE_BACKEND", "landlock"); }

}  // namespace escape
