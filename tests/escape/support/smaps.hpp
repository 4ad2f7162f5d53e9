// How a process maps a file, from /proc/<pid>/smaps: the part of it mapped with 2 MB pages.
// Header-only: the start-up tests and bench/spawn read the front end's mappings with it.
#pragma once

#include <sys/types.h>

#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>

namespace escape {

/// The kilobytes of `file` that process `pid` maps with 2 MB pages (FilePmdMapped), summed by
/// the mappings' permissions ("r--p", "r-xp"; a mapping of the file with none is there with 0).
/// Nothing when the mappings cannot be read: those of a process that is not dumpable, as cordon
/// is while it runs, show only to a privileged reader.
inline std::optional<std::map<std::string, long>> huge_mapped_kb(pid_t pid,
                                                                 const std::string& file) {
  std::ifstream smaps("/proc/" + std::to_string(pid) + "/smaps");
  std::map<std::string, long> kb;
  std::string line, current;
  bool read = false;
  while (std::getline(smaps, line)) {
    read = true;
    std::istringstream words(line);
    std::string first, perms, offset, dev, inode, path;
    words >> first;
    if (first.find('-') != std::string::npos && words >> perms >> offset >> dev >> inode) {
      words >> path;
      current = path == file ? perms : "";
      if (!current.empty()) kb[current] += 0;
    } else if (!current.empty() && first == "FilePmdMapped:") {
      long n = 0;
      words >> n;
      kb[current] += n;
    }
  }
  if (!read) return std::nullopt;
  return kb;
}

}  // namespace escape
