// Whether the front end runs with its read-only data and code in 2 MB pages (front/README.md,
// "The code in one 2 MB page"): printed beside the figures, which depend on it on the VMs
// cordon is developed on.
#pragma once

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "quiet_spawn.hpp"

namespace cordon::bench {

// The kilobytes of `file` that process `pid` maps with 2 MB pages, by permissions; empty when
// its mappings cannot be read (cordon is not dumpable while it runs: root can read them).
inline std::map<std::string, long> huge_mapped(pid_t pid, const std::string& file) {
  std::ifstream smaps("/proc/" + std::to_string(pid) + "/smaps");
  std::map<std::string, long> kb;
  std::string line, current;
  while (std::getline(smaps, line)) {
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
  return kb;
}

// One line: how `cli` (the front end) maps its read-only data and code during a run.
inline std::string front_end_pages(const std::string& cli) {
  pid_t pid = start_quiet({cli, "run", "--backend", "landlock", "--", "/bin/sleep", "1"});
  if (pid < 0) return "the front end's pages: unknown (it does not start)";
  std::map<std::string, long> kb;
  for (int i = 0; i < 50 && kb.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    kb = huge_mapped(pid, cli);
  }
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (kb.empty())
    return "the front end's pages: unknown (its mappings cannot be read as this user)";
  long data = kb["r--p"], code = kb["r-xp"];
  std::string how = data > 0 && code > 0   ? "in 2 MB pages"
                    : data > 0 || code > 0 ? "partly in 2 MB pages"
                                           : "in 4 KB pages (written in pieces, or read back "
                                             "from the disk: front/README.md)";
  return "the front end's read-only data and code: " + how + " (" + std::to_string(data) + " and " +
         std::to_string(code) + " kB of 2 MB pages)";
}

}  // namespace cordon::bench
