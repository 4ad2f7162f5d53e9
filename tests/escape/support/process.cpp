// Spawning and reaping host processes for the escape suite.
#include "process.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

extern char** environ;

namespace escape {
namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

/// The environment for the child: ours, minus unset_env, plus set_env.
std::vector<std::string> child_environment(const SpawnOptions& o) {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry(*e);
    auto eq = entry.find('=');
    if (eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  for (const auto& name : o.unset_env) env.erase(name);
  for (const auto& [k, v] : o.set_env) env[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

std::vector<char*> c_strings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

/// In the child after fork: wire stdio, keep the inherited descriptors, exec. Never returns.
[[noreturn]] void exec_child(int out_w, int err_w, const std::vector<int>& keep, char** argv,
                             char** envp) {
  int devnull = open("/dev/null", O_RDONLY);
  if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(out_w, 1) < 0 || dup2(err_w, 2) < 0) _exit(120);
  for (int fd : keep) fcntl(fd, F_SETFD, 0);
  // A fresh process group, so that the harness can kill whatever the child leaves behind.
  setpgid(0, 0);
  execve(argv[0], argv, envp);
  dprintf(2, "harness: exec '%s' failed: %s\n", argv[0], strerror(errno));
  _exit(121);
}

void append_capped(std::string& to, const char* data, std::size_t n, std::size_t cap) {
  if (to.size() < cap) to.append(data, std::min(n, cap - to.size()));
}

/// /proc/<pid>/<file> whole; empty when the process is gone.
std::string read_proc(const std::string& pid, const char* file) {
  std::ifstream in("/proc/" + pid + "/" + file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

Process::Process(const SpawnOptions& options) : options_(options) {
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) fail("pipe2");
  auto args = options.argv;
  auto env = child_environment(options);
  auto argv = c_strings(args);
  auto envp = c_strings(env);
  started_ = std::chrono::steady_clock::now();
  pid_ = fork();
  if (pid_ < 0) fail("fork");
  if (pid_ == 0)
    exec_child(out_pipe[1], err_pipe[1], options.inherit_fds, argv.data(), envp.data());
  close(out_pipe[1]);
  close(err_pipe[1]);
  out_fd_ = out_pipe[0];
  err_fd_ = err_pipe[0];
}

Process::~Process() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (out_fd_ >= 0) close(out_fd_);
  if (err_fd_ >= 0) close(err_fd_);
}

Exit Process::wait() {
  Exit exit;
  auto deadline = started_ + options_.deadline;
  char buf[65536];
  while (out_fd_ >= 0 || err_fd_ >= 0) {
    pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 && !exit.harness_killed) {
      exit.harness_killed = true;
      kill(-pid_, SIGKILL);
      kill(pid_, SIGKILL);
    }
    // Descendants that escaped the process group may hold the pipes open forever: stop
    // reading a little after the kill, so that the harness itself always ends.
    if (exit.harness_killed && left < -std::chrono::seconds(2)) break;
    poll(fds, 2, left.count() > 0 ? static_cast<int>(std::min<long>(left.count(), 1000)) : 200);
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        close(fds[i].fd);
        (i == 0 ? out_fd_ : err_fd_) = -1;
        continue;
      }
      if (i == 0) exit.out_bytes += static_cast<std::uint64_t>(n);
      append_capped(i == 0 ? exit.out : exit.err, buf, static_cast<std::size_t>(n),
                    options_.capture_limit);
    }
  }
  int status = 0;
  rusage usage{};
  while (wait4(pid_, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  exit.wall = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - started_);
  exit.max_rss_kb = usage.ru_maxrss;
  if (WIFEXITED(status)) exit.status = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) {
    exit.signal = WTERMSIG(status);
    exit.status = 128 + exit.signal;
  }
  return exit;
}

Exit run_process(const SpawnOptions& options) {
  Process p(options);
  return p.wait();
}

bool pid_alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  auto close_paren = line.rfind(')');
  return close_paren != std::string::npos && close_paren + 2 < line.size() &&
         line[close_paren + 2] != 'Z' && line[close_paren + 2] != 'X';
}

namespace {

// The live processes but this one whose /proc entry `match` accepts (given the pid's name).
template <typename Match>
std::vector<pid_t> pids_where(Match match) {
  std::vector<pid_t> found;
  DIR* d = opendir("/proc");
  if (d == nullptr) fail("opendir /proc");
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    pid_t pid = std::stoi(e->d_name);
    if (pid != getpid() && match(e->d_name) && pid_alive(pid)) found.push_back(pid);
  }
  closedir(d);
  return found;
}

}  // namespace

std::vector<pid_t> pids_with_marker(const std::string& marker) {
  return pids_where([&marker](const char* pid) {
    return read_proc(pid, "cmdline").find(marker) != std::string::npos;
  });
}

std::vector<pid_t> pids_with_argument(const std::string& arg, const std::string& name) {
  const std::string whole = std::string(1, '\0') + arg + '\0';
  return pids_where([&](const char* pid) {
    if (('\0' + read_proc(pid, "cmdline")).find(whole) == std::string::npos) return false;
    return name.empty() || read_proc(pid, "comm") == name + "\n";
  });
}

std::string unique_marker(const std::string& prefix) {
  static std::atomic<int> counter{0};
  return prefix + "-" + std::to_string(getpid()) + "-" + std::to_string(++counter);
}

}  // namespace escape
