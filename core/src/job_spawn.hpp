// Starting a job's supervisor detached from the caller, and the small OS helpers around it.
#pragma once

#include <cstdint>
#include <filesystem>

namespace cordon::detail {

/// The supervisor as started: its pid and its start time, which together identify it.
struct SupervisorId {
  int pid = 0;
  std::uint64_t start_ticks = 0;
};

/// Starts `cordon_exe job supervise DIR` in a new session, double-forked so that it is nobody's
/// child, with stdio on /dev/null and no inherited descriptors. Throws Error CRD6003 when it
/// cannot be started (including a failed exec).
SupervisorId spawn_supervisor(const std::filesystem::path& cordon_exe,
                              const std::filesystem::path& dir);

/// The `cordon` executable: this process when it is cordon, else the one installed next to the
/// core library (../bin/cordon), else "cordon" on PATH.
std::filesystem::path default_cordon_exe();

/// Creates `dir` (and parents) with mode 0700; an existing directory is tightened to 0700.
/// Throws Error CRD6004.
void make_private_dir(const std::filesystem::path& dir);

/// The invoking user's home: $HOME, else the password database.
std::filesystem::path invoking_home();

}  // namespace cordon::detail
