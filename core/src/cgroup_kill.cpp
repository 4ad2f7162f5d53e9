// Ending everything in a run's cgroup (SandboxCgroup::kill_all): for a backend whose command is
// not in a pid namespace of its own, the group is what holds every process of the run.
#include <signal.h>
#include <cordon/sdk/cgroup.hpp>
#include <cordon/sdk/owned_fd.hpp>

#include <chrono>
#include <sstream>
#include <thread>

namespace cordon::sdk {

namespace {

// A zombie has ended: it only waits for its parent, and SIGKILL cannot end it further.
bool is_zombie(pid_t pid) {
  auto stat = read_text("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return false;
  auto paren = stat->rfind(')');
  return paren != std::string::npos && paren + 2 < stat->size() && (*stat)[paren + 2] == 'Z';
}

// Sends SIGKILL to every live process `dir`'s cgroup.procs lists; how many there were.
int kill_listed(const std::string& dir) {
  std::istringstream procs(read_text(dir + "/cgroup.procs").value_or(""));
  int alive = 0;
  for (pid_t pid; procs >> pid;)
    if (pid > 0 && !is_zombie(pid) && ::kill(pid, SIGKILL) == 0) ++alive;
  return alive;
}

}  // namespace

bool SandboxCgroup::kill_all(int rounds) noexcept {
  try {
    // cgroup.kill (Linux 5.14) kills the group and every group below it at once; a kernel
    // without it, and v1, are served by the rounds below.
    if (version_ == CgroupVersion::v2 && !memory_.empty())
      if (OwnedFd fd(::open((memory_ + "/cgroup.kill").c_str(), O_WRONLY | O_CLOEXEC)); fd)
        if (::write(fd.get(), "1", 1) < 0) {
        }
    // Rounds, because a process may fork between the read of cgroup.procs and its kill.
    for (int round = 0; round < rounds; ++round) {
      int alive = 0;
      for (const auto* dir : {&memory_, &pids_, &cpu_})
        if (!dir->empty()) alive += kill_listed(*dir);
      if (alive == 0) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  } catch (...) {
  }
  return false;
}

}  // namespace cordon::sdk
