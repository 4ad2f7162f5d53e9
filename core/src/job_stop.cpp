// JobManager: stopping jobs (lost ones too), removing records, collecting ended ones.
#include <cordon/jobs.hpp>

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "job_files.hpp"
#include "job_reap.hpp"
#include "unique_fd.hpp"

namespace cordon {

namespace json = boost::json;
using namespace std::chrono_literals;
using detail::SupervisorRef;

namespace {

// SIGTERM carrying the grace in milliseconds (sigqueue's value): the supervisor takes the
// grace from the signal, never from a file. Sent through a pidfd checked to be the supervisor.
void ask_to_stop(const SupervisorRef& sup, Duration grace) {
  detail::Fd fd(static_cast<int>(::syscall(SYS_pidfd_open, sup.pid, 0)));
  if (fd.fd < 0 || !sup.alive()) return;
  siginfo_t info{};
  info.si_signo = SIGTERM;
  info.si_code = SI_QUEUE;
  info.si_pid = ::getpid();
  info.si_uid = ::getuid();
  info.si_value.sival_int = static_cast<int>(grace.count());
  ::syscall(SYS_pidfd_send_signal, fd.fd, SIGTERM, &info, 0);
}

// What a lost job's records say it left.
detail::LostJob lost_job_of(const PrivateDir& dir) {
  detail::LostJob lost;
  auto job = detail::read_json(dir, detail::kJobFile);
  if (job) {
    lost.backend = detail::string_member(*job, "backend");
    if (auto* s = job->if_contains("settings"); s && s->is_object()) lost.settings = s->as_object();
    // Its plugin_dirs are not taken: the plugins loaded are the ones this process was told of.
  }
  if (auto sup = detail::supervisor_of(dir))
    lost.session = sup->session, lost.supervisor_ticks = sup->ticks;
  return lost;
}

}  // namespace

bool JobManager::settle(const std::string& id, Duration grace,
                        std::vector<std::string>& lines) const {
  auto settled = detail::settle_lost_job(lost_job_of(dir_of(id)), options_, grace);
  lines.insert(lines.end(), settled.lines.begin(), settled.lines.end());
  return settled.clean;
}

std::optional<JobManager::PendingStop> JobManager::request_stop(const std::string& id,
                                                                Duration grace) {
  grace = std::clamp(grace, Duration::zero(), kMaxStopGrace);
  JobInfo info = status(id);
  if (info.status == JobStatus::lost) return PendingStop{id, grace, 0, 0, true};
  if (detail::ended(info.status)) return std::nullopt;
  auto sup = detail::supervisor_of(dir_of(id)).value_or(SupervisorRef{});
  if (sup.alive()) ask_to_stop(sup, grace);
  return PendingStop{id, grace, sup.pid, sup.ticks, false};
}

JobInfo JobManager::finish_stop(const PendingStop& p) {
  if (p.lost) {
    std::vector<std::string> lines;
    settle(p.id, p.grace, lines);
    JobInfo info = status(p.id);
    info.cleanup = std::move(lines);
    return info;
  }
  JobInfo info = wait(p.id, p.grace + 10s);
  SupervisorRef sup{p.supervisor_pid, p.supervisor_ticks, 0};
  if (!detail::ended(info.status) && sup.alive()) {
    ::kill(sup.pid, SIGKILL);  // the supervisor did not finish: its sandbox dies with it
    info = wait(p.id, 5s);
  }
  return info;
}

JobInfo JobManager::stop(const std::string& id, Duration grace) {
  auto pending = request_stop(id, grace);
  return pending ? finish_stop(*pending) : status(id);
}

void JobManager::stop_all(Duration grace) {
  // Every job is asked first, so their graces run side by side rather than one after another.
  std::vector<PendingStop> pending;
  for (const auto& id : started_) {
    try {
      if (auto p = request_stop(id, grace)) pending.push_back(std::move(*p));
    } catch (const Error&) {
      // removed by someone else meanwhile
    }
  }
  for (const auto& p : pending) {
    try {
      finish_stop(p);
    } catch (const Error&) {
    }
  }
}

void JobManager::remove(const std::string& id) {
  JobInfo info = status(id);
  if (!detail::ended(info.status))
    throw Error(code::kJobRunning, "job '" + id + "' is still running",
                "stop it first with 'cordon job stop " + id + "'");
  std::vector<std::string> lines;
  if (info.status == JobStatus::lost && !settle(id, 1s, lines)) {
    std::string why;
    for (const auto& l : lines) why += "; " + l;
    throw Error(code::kJobRunning,
                "job '" + id + "' was lost and what it left may still be running" + why,
                "its record is kept until that is known to be gone");
  }
  root()->remove(id);
}

std::size_t JobManager::gc(std::vector<std::string>* kept) {
  std::size_t n = 0;
  auto root = this->root();
  if (!root) return n;
  for (const auto& id : root->entries()) {
    if (!detail::valid_job_id(id)) continue;
    try {
      if (!detail::ended(status(id).status)) continue;
      remove(id);
      ++n;
    } catch (const Error& e) {
      // A job being made (no record yet) is skipped; any other, a record that is not cordon's
      // own included, is kept and named.
      if (kept && e.code() != code::kNoSuchJob) kept->push_back("job " + id + ": " + e.message());
    }
  }
  return n;
}

}  // namespace cordon
