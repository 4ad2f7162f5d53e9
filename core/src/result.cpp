// RunResult helpers: the CLI exit status convention, the wording of a memory-limit kill.
#include <cordon/sdk/result.hpp>

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

std::string memory_limit_note(std::uint64_t memory_mb, bool command_killed) {
  std::string limit = "the memory limit (limits.memory_mb = " + std::to_string(memory_mb) + ")";
  if (command_killed) return "killed by " + limit;
  return limit + " was reached: the kernel killed a process of the sandbox";
}

}  // namespace cordon
