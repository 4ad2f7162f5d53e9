// The backend toolkit's test helper: is anything of a run still alive?
//
// For a plugin author's own tests of a local backend (header-only; link nothing more). Every
// run must end with no process of it alive. Three ways to find one that lingers, from the
// host's /proc (run the test as root, or as the user the sandbox's processes run as, so that
// their environment is readable):
//   - by a marker: put a unique token in the command's argv or granted environment, then look
//     for any process whose command line or environment holds it;
//   - by pid namespace: every process in the namespace of a process of the run;
//   - by cgroup: every process in a run's cgroup directory and below.
//
//   auto marker = cordon::sdk::testing::unique_marker();
//   plan.env["CORDON_TEST_MARKER"] = marker;
//   backend.run(plan, sink);
//   REQUIRE(cordon::sdk::testing::survivors(marker).empty());
#pragma once

#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#include <cordon/sdk/owned_fd.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace cordon::sdk::testing {

/// A token unique to this call ("cordon-marker-" and 24 hex digits).
inline std::string unique_marker() {
  std::random_device rd;
  std::string out = "cordon-marker-";
  const char* hex = "0123456789abcdef";
  for (int i = 0; i < 24; ++i) out += hex[rd() % 16];
  return out;
}

namespace detail {

inline std::string slurp(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Every pid listed in /proc now (a process may be gone by the time it is looked at).
inline std::vector<pid_t> all_pids() {
  std::vector<pid_t> pids;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.empty() &&
        std::all_of(name.begin(), name.end(), [](unsigned char c) { return std::isdigit(c); }))
      pids.push_back(static_cast<pid_t>(std::atoi(name.c_str())));
  }
  return pids;
}

}  // namespace detail

/// Live processes (zombies excluded) whose command line or environment contains `marker`; the
/// calling process is never listed.
inline std::vector<pid_t> processes_marked(std::string_view marker) {
  std::vector<pid_t> found;
  for (pid_t pid : detail::all_pids()) {
    if (pid == ::getpid()) continue;
    const std::string dir = "/proc/" + std::to_string(pid);
    bool marked = detail::slurp(dir + "/cmdline").find(marker) != std::string::npos ||
                  detail::slurp(dir + "/environ").find(marker) != std::string::npos;
    if (marked && !cordon::is_zombie(pid)) found.push_back(pid);
  }
  return found;
}

/// The marked processes still alive after waiting up to `grace` for them to go (a killed
/// process takes a moment to leave /proc).
inline std::vector<pid_t> survivors(std::string_view marker,
                                    std::chrono::milliseconds grace = std::chrono::seconds(2)) {
  auto until = std::chrono::steady_clock::now() + grace;
  while (true) {
    auto left = processes_marked(marker);
    if (left.empty() || std::chrono::steady_clock::now() >= until) return left;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

/// The pid namespace of `pid` (the inode of /proc/<pid>/ns/pid), or 0 when it is gone.
inline ino_t pid_namespace_of(pid_t pid) {
  struct stat st {};
  if (::stat(("/proc/" + std::to_string(pid) + "/ns/pid").c_str(), &st) != 0) return 0;
  return st.st_ino;
}

/// Live processes in the pid namespace whose inode is `ns` (see pid_namespace_of). Take the
/// inode while the run is going; afterwards this must be empty.
inline std::vector<pid_t> pid_namespace_members(ino_t ns) {
  std::vector<pid_t> found;
  if (ns == 0) return found;
  for (pid_t pid : detail::all_pids())
    if (pid_namespace_of(pid) == ns && !cordon::is_zombie(pid)) found.push_back(pid);
  return found;
}

/// Processes in the cgroup directory `dir` and every group below it (cgroup.procs, v1 or v2);
/// empty when the directory is gone.
inline std::vector<pid_t> cgroup_members(const std::filesystem::path& dir) {
  std::vector<pid_t> found;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return found;
  auto read_procs = [&found](const std::filesystem::path& group) {
    std::ifstream in(group / "cgroup.procs");
    for (pid_t pid; in >> pid;) found.push_back(pid);
  };
  read_procs(dir);
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
    if (it->is_directory(ec)) read_procs(it->path());
  return found;
}

}  // namespace cordon::sdk::testing
