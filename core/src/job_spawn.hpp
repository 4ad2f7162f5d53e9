// Starting a job's supervisor detached from the caller, and the small OS helpers around it.
#pragma once

#include <cstdint>
#include <filesystem>

namespace cordon::detail {

/// The supervisor as started: its pid and its start time, which together identify it, and its
/// session (led by the intermediate process, which exits at once).
struct SupervisorId {
  int pid = 0;
  std::uint64_t start_ticks = 0;
  int session = 0;
};

/// Starts `cordon_exe job supervise DIR` in a new session, double-forked so that it is nobody's
/// child, with stdio on /dev/null and no inherited descriptor but `spec_fd`, which it finds as
/// kSpecFd (job_spec.hpp). Throws Error CRD6003 when it cannot be started (including a failed
/// exec).
SupervisorId spawn_supervisor(const std::filesystem::path& cordon_exe,
                              const std::filesystem::path& dir, int spec_fd);

/// The `cordon` executable: this process when it is cordon, else the one installed next to the
/// core library (../bin/cordon), else "cordon" on PATH.
std::filesystem::path default_cordon_exe();

/// The invoking user's home: $HOME, else the password database.
std::filesystem::path invoking_home();

}  // namespace cordon::detail
