// Locations of the programs the escape suite drives.
#include "probes.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace escape {
namespace {

namespace fs = std::filesystem;

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

// The sandbox hides the host's /tmp behind a private one (even with read = "host"), and a
// build tree may live there: the probes run from a copy under /var/tmp, removed at exit.
std::string staged_probes() {
  // Never destroyed, so the atexit handler below can still read it.
  static const std::string& dir = *new std::string([] {
    fs::path to =
        fs::path(env_or("CORDON_ESCAPE_TMPDIR", "/var/tmp")) /
        ("cordon-escape-probes-" + std::to_string(::getuid()) + "-" + std::to_string(::getpid()));
    std::error_code ec;
    fs::create_directories(to, ec);
    fs::copy(CORDON_ESCAPE_PROBE_DIR, to,
             fs::copy_options::recursive | fs::copy_options::overwrite_existing, ec);
    bool copied = !ec;
    fs::permissions(to, fs::perms(0755), ec);
    std::atexit([] {
      std::error_code ignored;
      if (staged_probes() != CORDON_ESCAPE_PROBE_DIR) fs::remove_all(staged_probes(), ignored);
    });
    return copied ? to.string() : std::string(CORDON_ESCAPE_PROBE_DIR);
  }());
  return dir;
}

}  // namespace

std::string cordon_cli() { return env_or("CORDON_ESCAPE_CLI", CORDON_CLI); }

std::string probe_dir() { return staged_probes(); }

std::string probe(const std::string& name) { return probe_dir() + "/" + name; }

std::string backend_name() { return env_or("CORDON_ESCAPE_BACKEND", "landlock"); }

}  // namespace escape
