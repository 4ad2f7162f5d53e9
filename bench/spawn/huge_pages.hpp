// Whether the front end runs with its read-only data and code in 2 MB pages (front/README.md,
// "The code in one 2 MB page"): printed beside the figures, which depend on it on the VMs
// cordon is developed on.
#pragma once

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "quiet_spawn.hpp"
#include "smaps.hpp"

namespace cordon::bench {

// One line: how `cli` (the front end) maps its read-only data and code during a run.
inline std::string front_end_pages(const std::string& cli) {
  pid_t pid = start_quiet({cli, "run", "--backend", "landlock", "--", "/bin/sleep", "1"});
  if (pid < 0) return "the front end's pages: unknown (it does not start)";
  std::map<std::string, long> kb;
  bool readable = false;
  for (int i = 0; i < 50 && (kb["r--p"] == 0 || kb["r-xp"] == 0); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (auto now = escape::huge_mapped_kb(pid, cli)) readable = true, kb = *now;
  }
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!readable) return "the front end's pages: unknown (its mappings cannot be read as this user)";
  long data = kb["r--p"], code = kb["r-xp"];
  std::string how = data > 0 && code > 0   ? "in 2 MB pages"
                    : data > 0 || code > 0 ? "partly in 2 MB pages"
                                           : "in 4 KB pages (written in pieces, or read back "
                                             "from the disk: front/README.md)";
  return "the front end's read-only data and code: " + how + " (" + std::to_string(data) + " and " +
         std::to_string(code) + " kB of 2 MB pages)";
}

}  // namespace cordon::bench
