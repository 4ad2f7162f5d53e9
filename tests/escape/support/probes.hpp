// Where the escape suite finds what it drives: the built `cordon` and the probe programs.
#pragma once

#include <string>

namespace escape {

/// The `cordon` executable under test (CORDON_ESCAPE_CLI overrides the built one).
std::string cordon_cli();

/// The directory holding the built probe programs.
std::string probe_dir();

/// The path of one probe program ("fsop", "netprobe", ...).
std::string probe(const std::string& name);

/// The backend the suite targets: CORDON_ESCAPE_BACKEND, else "landlock".
std::string backend_name();

}  // namespace escape
