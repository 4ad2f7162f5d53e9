// A file written as if it were `age` old, for tests of what is pruned by age.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>

namespace cordon::testing {

/// Writes "x" to `path` and sets its access and modification times `age` back. False when the
/// times cannot be set.
inline bool write_aged_file(const std::filesystem::path& path, std::chrono::seconds age) {
  std::ofstream(path) << "x";
  std::time_t then = std::time(nullptr) - age.count();
  timespec times[2] = {{then, 0}, {then, 0}};
  return ::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW) == 0;
}

}  // namespace cordon::testing
