// The caller's side of a supervised run: pipes, fork, streaming output, the report.
#include <cordon/sdk/child.hpp>
#include <cordon/sdk/pump.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "spawn_child.hpp"
#include "spawn_guard.hpp"

namespace cordon::detail {

using sdk::ChildOutcome;
using sdk::ChildSpec;
using sdk::ChildStage;
using sdk::PumpEnd;

namespace {

// Descriptors 0-2 are the command's to be: keep every pipe end above them.
int lift(int fd) {
  if (fd < 0 || fd > 2) return fd;
  int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  ::close(fd);
  return moved;
}

bool make_pipe(int ends[2]) {
  if (::pipe2(ends, O_CLOEXEC) != 0) return false;
  ends[0] = lift(ends[0]);
  ends[1] = lift(ends[1]);
  return ends[0] >= 0 && ends[1] >= 0;
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

timespec monotonic_deadline(std::chrono::steady_clock::time_point deadline) {
  auto left = deadline - std::chrono::steady_clock::now();
  if (left < std::chrono::steady_clock::duration::zero()) left = {};
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count() + t.tv_nsec;
  t.tv_sec += static_cast<time_t>(ns / 1000000000L);
  t.tv_nsec = static_cast<long>(ns % 1000000000L);
  return t;
}

struct Arrays {
  std::vector<const char*> paths;
  std::vector<char*> argv;
  std::vector<char*> envp;
  std::string uid_map, gid_map;
};

// Each id mapped to itself: this process's own, and the command's user when it has another.
template <typename Id>
std::string identity_map(Id own, std::optional<Id> other) {
  std::string map = std::to_string(own) + " " + std::to_string(own) + " 1\n";
  if (other && *other != own) map += std::to_string(*other) + " " + std::to_string(*other) + " 1\n";
  return map;
}

Arrays arrays_of(const ChildSpec& spec) {
  Arrays a;
  for (const auto& p : spec.exec_paths) a.paths.push_back(p.c_str());
  for (const auto& s : spec.argv) a.argv.push_back(const_cast<char*>(s.c_str()));
  for (const auto& s : spec.env) a.envp.push_back(const_cast<char*>(s.c_str()));
  a.paths.push_back(nullptr);
  a.argv.push_back(nullptr);
  a.envp.push_back(nullptr);
  a.uid_map = identity_map(::geteuid(), spec.user ? std::optional(spec.user->uid) : std::nullopt);
  a.gid_map = identity_map(::getegid(), spec.user ? std::optional(spec.user->gid) : std::nullopt);
  return a;
}

ChildPlan plan_of(const ChildSpec& spec, const Arrays& a) {
  ChildPlan p{};
  p.exec_paths = a.paths.data();
  p.argv = a.argv.data();
  p.envp = a.envp.data();
  p.cwd = spec.cwd.c_str();
  p.rlimits = spec.rlimits.data();
  p.rlimit_count = spec.rlimits.size();
  p.has_deadline = spec.deadline.has_value();
  if (spec.deadline) p.deadline = monotonic_deadline(*spec.deadline);
  auto grace_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(spec.grace).count();
  p.grace = timespec{static_cast<time_t>(grace_ns / 1000000000L), grace_ns % 1000000000L};
  p.cordon = ::getpid();
  p.guard = spec.guard;
  p.filter = &spec.filter;
  p.namespaces = spec.namespaces;
  p.uid_map = a.uid_map.c_str();
  p.gid_map = a.gid_map.c_str();
  p.deny_setgroups = !spec.user;
  p.has_user = spec.user.has_value();
  if (spec.user) {
    p.uid = spec.user->uid;
    p.gid = spec.user->gid;
  }
  return p;
}

// The pipes of one run; every descriptor is closed by the destructor.
struct Pipes {
  int out[2] = {-1, -1}, err[2] = {-1, -1}, status[2] = {-1, -1}, in[2] = {-1, -1};
  bool open(bool with_stdin) {
    if (!make_pipe(out) || !make_pipe(err) || !make_pipe(status)) return false;
    if (with_stdin) return make_pipe(in);
    in[0] = lift(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    return in[0] >= 0;
  }
  ~Pipes() {
    for (int* fd : {&out[0], &out[1], &err[0], &err[1], &status[0], &status[1], &in[0], &in[1]})
      close_fd(*fd);
  }
};

// Streams the command's output, feeds its stdin and collects the supervisor's report. The
// supervisor keeps the deadline; stop requests are passed to it (it is our child until we wait
// for it, so the signal cannot hit a stranger). Once it has reported, nothing can hold the
// pipes for long: they get 200 ms more.
PumpEnd pump_child(Pipes& p, const ChildSpec& spec, OutputSink& sink, pid_t supervisor,
                   std::string& report) {
  sdk::Pump pump(sink);
  pump.output(Stream::out, p.out[0]);
  pump.output(Stream::err, p.err[0]);
  if (p.in[1] >= 0) pump.input(std::exchange(p.in[1], -1), spec.stdin_data.value_or(""));
  int status_fd = p.status[0];
  pump.watch(status_fd, [status_fd, &report] {
    char buf[256];
    ssize_t got = ::read(status_fd, buf, sizeof buf);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) return true;
    if (got > 0) report.append(buf, static_cast<std::size_t>(got));
    return got > 0;
  });
  sdk::PumpControl control;
  control.stop = spec.stop;
  control.terminate = [supervisor] { ::kill(supervisor, kTerminateSignal); };
  control.kill = [supervisor] { ::kill(supervisor, SIGTERM); };
  control.linger = std::chrono::milliseconds(200);
  return pump.run(control);
}

ChildOutcome outcome_of(const std::string& bytes, int supervisor_status) {
  ChildOutcome out;
  SupervisorReport r{};
  if (bytes.size() != sizeof r) {
    out.fault = "the supervisor process died before reporting (" +
                std::string(WIFSIGNALED(supervisor_status)
                                ? "signal " + std::to_string(WTERMSIG(supervisor_status))
                                : "status " + std::to_string(WEXITSTATUS(supervisor_status))) +
                ")";
    return out;
  }
  std::memcpy(&r, bytes.data(), sizeof r);
  if (r.magic != kReportMagic) {
    out.fault = "the supervisor's report is malformed";
    return out;
  }
  out.failed_stage = static_cast<ChildStage>(r.stage);
  out.error = r.error;
  out.failed_item = r.item;
  if (r.has_status) out.wait_status = r.status;
  out.timed_out = r.timed_out != 0;
  out.leftovers = r.leftovers;
  out.cpu_user_seconds = static_cast<double>(r.cpu_user_usec) / 1e6;
  out.cpu_system_seconds = static_cast<double>(r.cpu_system_usec) / 1e6;
  return out;
}

}  // namespace

}  // namespace cordon::detail

namespace cordon::sdk {

using namespace cordon::detail;

std::vector<std::string> exec_candidates(const std::string& program, const std::string& path_var) {
  if (program.find('/') != std::string::npos) return {program};
  std::vector<std::string> out;
  std::string_view rest = path_var;
  while (true) {
    auto colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    out.push_back((dir.empty() ? "." : dir) + "/" + program);
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return out;
}

ChildOutcome run_child(const ChildSpec& spec, OutputSink& sink) {
  Pipes pipes;
  ChildOutcome failed;
  if (children_not_waitable()) {
    failed.failed_stage = ChildStage::unwaitable;
    return failed;
  }
  if (!pipes.open(spec.stdin_data.has_value())) {
    failed.fault = std::string("cannot create pipes: ") + std::strerror(errno);
    return failed;
  }
  Arrays arrays = arrays_of(spec);
  ChildPlan plan = plan_of(spec, arrays);
  ChildFds fds{pipes.in[0], pipes.out[1], pipes.err[1], pipes.status[1]};
  // Forked with every signal blocked: a stop request that comes before the supervisor has set
  // its own mask waits for it, instead of killing it (SIGUSR1's default) and orphaning the
  // command.
  sigset_t all, old;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t supervisor = ::fork();
  if (supervisor != 0) ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (supervisor < 0) {
    failed.fault = std::string("cannot fork: ") + std::strerror(errno);
    return failed;
  }
  if (supervisor == 0) run_supervisor(plan, fds);
  for (int* fd : {&pipes.in[0], &pipes.out[1], &pipes.err[1], &pipes.status[1]}) close_fd(*fd);
  std::string report;
  PumpEnd end = pump_child(pipes, spec, sink, supervisor, report);
  int status = 0;
  while (::waitpid(supervisor, &status, 0) < 0 && errno == EINTR) {
  }
  ChildOutcome out = outcome_of(report, status);
  // A command that ended on its own before the kill arrived was not stopped.
  bool ended_by_kill =
      out.wait_status && WIFSIGNALED(*out.wait_status) && WTERMSIG(*out.wait_status) == SIGKILL;
  out.stopped = end.stopped && (ended_by_kill || !out.wait_status);
  return out;
}

bool child_guard_supported() { return guard_supported(); }

std::optional<Error> children_not_waitable() {
  struct sigaction now {};
  if (::sigaction(SIGCHLD, nullptr, &now) != 0) return std::nullopt;
  if (now.sa_handler != SIG_IGN && (now.sa_flags & SA_NOCLDWAIT) == 0) return std::nullopt;
  return Error(code::kBackendResource,
               "this process ignores SIGCHLD (SIG_IGN or SA_NOCLDWAIT): the kernel would reap "
               "the command's processes before cordon could wait for them, and lose its exit "
               "status",
               "restore SIGCHLD's default action (or a handler without SA_NOCLDWAIT) in the "
               "program that runs cordon");
}

bool child_supervision_supported(std::string& evidence) {
  GuardFilter guard;
  bool built = build_guard(guard, ::getpid(), ::getpgrp());
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0 ||
        ::access("/proc/thread-self/children", R_OK) != 0)
      _exit(1);
    if (!built || ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || install_guard(guard) != 0)
      _exit(2);
    _exit(::kill(::getppid(), 0) != 0 && errno == EPERM ? 0 : 3);
  }
  if (pid < 0) {
    evidence = std::string("cannot fork to test supervision: ") + std::strerror(errno);
    return false;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 0)
    evidence =
        "a child subreaper kills the whole process tree, setsid() escapees included; seccomp "
        "keeps the command from signalling or re-limiting its supervisor";
  else if (code == 1)
    evidence = "PR_SET_CHILD_SUBREAPER or /proc/<pid>/task/<tid>/children is unavailable";
  else
    evidence =
        "no seccomp guard here: the command could kill its supervisor and leave setsid() "
        "children running";
  return code == 0;
}

}  // namespace cordon::sdk
