// Lost jobs: the processes of the dead supervisor's session, and the backend's garbage.
#include "job_reap.hpp"

#include <dirent.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cordon/config.hpp>
#include <cordon/registry.hpp>

#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "job_files.hpp"

namespace cordon::detail {

namespace {

// Fields 3 (state), 6 (session) and 22 (start time) of /proc/PID/stat.
struct ProcStat {
  char state = 0;
  int session = 0;
  std::uint64_t start = 0;
};

std::optional<ProcStat> proc_stat(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  auto close = line.rfind(')');  // the command name may hold spaces and parentheses
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(line.substr(close + 2));
  ProcStat st;
  std::string field;
  for (int i = 3; i <= 22 && rest >> field; ++i) {
    if (i == 3) st.state = field[0];
    if (i == 6) st.session = std::stoi(field);
    if (i == 22) st.start = std::stoull(field);
  }
  return st;
}

bool member(int pid, int sid, std::uint64_t ticks) {
  auto st = proc_stat(pid);
  return st && st->session == sid && st->start >= ticks && st->state != 'Z' && st->state != 'X';
}

// Signals `pid` only while it is still a member (a pidfd pins the process checked).
void signal_member(int pid, int sid, std::uint64_t ticks, int sig) {
  int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) return;
  if (member(pid, sid, ticks)) ::syscall(SYS_pidfd_send_signal, fd, sig, nullptr, 0);
  ::close(fd);
}

std::size_t end_session(int sid, std::uint64_t ticks, Duration grace) {
  auto pids = session_processes(sid, ticks);
  for (int pid : pids) signal_member(pid, sid, ticks, SIGTERM);
  auto end = std::chrono::steady_clock::now() + grace;
  while (!session_processes(sid, ticks).empty() && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  for (int round = 0; round < 50; ++round) {
    auto left = session_processes(sid, ticks);
    if (left.empty()) break;
    for (int pid : left) signal_member(pid, sid, ticks, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return pids.size();
}

void collect(const LostJob& job, const JobManagerOptions& options, Settlement& out) {
  RegistryOptions ro;
  ro.plugin_dirs = options.plugin_dirs;
  ro.pins = load_config(options.config).pins;
  ro.state_dir = default_backend_state_dir();
  Registry registry(ro);
  Backend* backend = registry.backend(job.backend);
  if (!backend) {
    const BackendEntry* entry = registry.find(job.backend);
    out.clean = false;
    out.lines.push_back("backend '" + job.backend + "' cannot be loaded to collect what the job " +
                        "left" + (entry && entry->error ? ": " + entry->error->message() : "") +
                        " (name its plugin directory with --plugin-dir)");
    return;
  }
  GarbageReport report = backend->collect_garbage(job.settings);
  for (auto& line : report.removed) out.lines.push_back(job.backend + ": removed " + line);
  if (report.error) {
    out.clean = false;
    out.lines.push_back(job.backend + ": " + report.error->message());
  }
}

}  // namespace

std::vector<int> session_processes(int sid, std::uint64_t ticks) {
  std::vector<int> out;
  if (sid <= 0) return out;
  // A pid that still names a session is never reused: a process with pid `sid` now means
  // that every member of the session had gone when it was made.
  if (proc_stat(sid)) return out;
  DIR* proc = ::opendir("/proc");
  if (!proc) return out;
  while (auto* e = ::readdir(proc)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (*end != '\0' || pid <= 0) continue;
    if (member(static_cast<int>(pid), sid, ticks)) out.push_back(static_cast<int>(pid));
  }
  ::closedir(proc);
  return out;
}

Settlement settle_lost_job(const LostJob& job, const JobManagerOptions& options, Duration grace) {
  Settlement out;
  try {
    if (std::size_t n = end_session(job.session, job.supervisor_ticks, grace))
      out.lines.push_back("ended " + std::to_string(n) + " leftover process" +
                          (n == 1 ? "" : "es") + " of the job");
    if (auto left = session_processes(job.session, job.supervisor_ticks); !left.empty()) {
      out.clean = false;
      out.lines.push_back(std::to_string(left.size()) + " process(es) of the job survived");
    }
    collect(job, options, out);
  } catch (const std::exception& e) {
    out.clean = false;
    out.lines.push_back(std::string("cannot end what the job left: ") + e.what());
  }
  return out;
}

}  // namespace cordon::detail
