// RunResult helpers: the CLI exit status convention.
#include <cordon/result.hpp>

namespace cordon {

int RunResult::cli_status() const {
  if (error) {
    if (error->code() == code::kNotFound) return 127;
    if (error->code() == code::kNotExecutable) return 126;
    if (error->code() == code::kTimeout) return 124;
    return 125;
  }
  if (timed_out) return 124;
  if (signal > 0) return 128 + signal;
  return exit_code >= 0 ? exit_code : 125;
}

}  // namespace cordon
