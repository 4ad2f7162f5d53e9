// Resource limits: memory, process and descriptor bombs are contained while the host stays
// responsive and the run ends; CPU time and file size limits kill or refuse. Where the caller
// cannot have a limit proven (an unprivileged user without a delegated cgroup cannot bound the
// sandbox's total memory), the denied side is cordon's refusal, CRD1001 naming the capability.
#include <signal.h>

#include <catch2/catch.hpp>

#include "cordon_run.hpp"
#include "host.hpp"
#include "probes.hpp"

using namespace escape;
using Catch::Matchers::Contains;

namespace {

/// The last megabyte count the memory bomb reported before it stopped or was killed, or 0.
long last_progress(const Ran& ran) {
  auto lines = ran.lines("mem-progress");
  return lines.empty() ? 0 : std::stol(lines.back());
}

/// The number after "after " in a bomb's failure line.
long count_after(const std::string& line) {
  auto at = line.rfind("after ");
  return at == std::string::npos ? -1 : std::stol(line.substr(at + 6));
}

/// Checks that cordon refused with CRD1001 and named `capability`.
void check_refused(const Ran& ran, const std::string& capability) {
  INFO(ran.describe());
  CHECK(ran.proc.status == 125);
  CHECK(ran.error_code() == "CRD1001");
  std::string said = ran.proc.err + (ran.json && ran.json->error ? ran.json->error->message : "");
  CHECK_THAT(said, Contains(capability));
}

/// Runs a bomb with the host pulse going; the run must end and the host must stay responsive.
Ran run_bomb(Scratch& s, const PolicySpec& policy, const std::vector<std::string>& args) {
  HostPulse pulse;
  std::vector<std::string> command{probe("bomb")};
  command.insert(command.end(), args.begin(), args.end());
  RunExtras extras;
  extras.deadline = std::chrono::seconds(90);
  Ran ran = run_cordon(s, policy, command, extras);
  long slowest = pulse.stop();
  INFO(ran.describe());
  CHECK_FALSE(ran.proc.harness_killed);
  INFO("slowest host /bin/true during the bomb: " << slowest << " ms");
  CHECK(slowest >= 0);
  CHECK(slowest < 2000);
  return ran;
}

}  // namespace

TEST_CASE("escape: a memory bomb is contained by memory_mb",
          "[escape][userns][limits][memory][docker]") {
  Scratch s;
  auto policy = confined(s.root());
  policy.limits["memory_mb"] = "64";
  if (!backend_would_run(s, &policy)) {
    // No cgroup for us: the total cannot be enforced, so cordon must refuse rather than degrade.
    check_refused(run_cordon(s, policy, {probe("bomb"), "mem", "16"}), "limit.memory");
    auto unlimited = run_probe(s, confined(s.root()), "bomb", {"mem", "16"});
    CHECK_THAT(unlimited.line("mem"), IsOk());
    return;
  }
  auto ok = run_probe(s, policy, "bomb", {"mem", "16"});
  INFO(ok.describe());
  CHECK_THAT(ok.line("mem"), Contains("OK 16 MB"));
  Ran bomb = run_bomb(s, policy, {"mem", "2048"});
  INFO(bomb.describe());
  CHECK_FALSE(bomb.out().find("mem: OK") != std::string::npos);
  CHECK(last_progress(bomb) <= 72);
  // Killed by the OOM killer (SIGKILL), or malloc failed (ENOMEM) and the probe said so.
  bool oom_killed = bomb.proc.status == 128 + SIGKILL && bomb.json && bomb.json->signal == SIGKILL;
  bool enomem = bomb.line("mem").rfind("ERR ENOMEM", 0) == 0 && bomb.proc.status == 1;
  CHECK((oom_killed || enomem));
}

TEST_CASE("escape: memory_mb bounds the whole sandbox, not each process",
          "[escape][userns][limits][memory][docker]") {
  Scratch s;
  auto policy = confined(s.root());
  policy.limits["memory_mb"] = "64";
  if (!backend_would_run(s, &policy)) {
    check_refused(run_cordon(s, policy, {probe("bomb"), "memkids", "2", "8"}), "limit.memory");
    return;
  }
  // Two children of 8 MB fit in 64 MB; four of 24 MB (each under the limit) together do not.
  auto fits = run_probe(s, policy, "bomb", {"memkids", "2", "8"});
  INFO(fits.describe());
  CHECK_THAT(fits.line("memkids"), Contains("held=2 of 2"));
  Ran over = run_bomb(s, policy, {"memkids", "4", "24"});
  INFO(over.describe());
  // At most two 24 MB children fit in 64 MB at once; the kernel kills the rest (or the parent).
  bool parent_killed = over.proc.status == 128 + SIGKILL;
  auto line = over.line("memkids");
  auto at = line.find("held=");
  if (!parent_killed) {
    REQUIRE(at != std::string::npos);
    CHECK(std::stoi(line.substr(at + 5)) <= 2);
    CHECK_THAT(line, !Contains("died=0"));
  }
}

TEST_CASE("escape: filling the private /tmp and HOME counts against memory_mb",
          "[escape][userns][limits][memory][tmpfs][docker]") {
  Scratch s;
  auto policy = confined(s.root());
  policy.limits["memory_mb"] = "64";
  if (!backend_would_run(s, &policy)) {
    check_refused(run_cordon(s, policy, {probe("bomb"), "tmpfill", "8", "/tmp"}), "limit.memory");
    return;
  }
  // tmpfs pages belong to no process: RLIMIT_AS cannot see them, a cgroup (or a size cap) can.
  for (const char* dir : {"/tmp", "."}) {
    auto ok = run_probe(s, policy, "bomb", {"tmpfill", "8", dir});
    INFO(ok.describe());
    CHECK_THAT(ok.line("tmpfill"), IsOk());
  }
  Ran bomb = run_bomb(s, policy, {"tmpfill", "1024", "/tmp"});
  INFO(bomb.describe());
  CHECK_THAT(bomb.out(), !Contains("tmpfill: OK"));
  auto progress = bomb.lines("tmpfill-progress");
  CHECK((progress.empty() || std::stol(progress.back()) <= 72));
  bool killed = bomb.proc.status == 128 + SIGKILL;
  bool refused = bomb.line("tmpfill").rfind("ERR ENOSPC", 0) == 0 ||
                 bomb.line("tmpfill").rfind("ERR ENOMEM", 0) == 0;
  CHECK((killed || refused));
  if (refused) CHECK(count_after(bomb.line("tmpfill")) <= 72);
}

TEST_CASE("escape: a fork bomb is contained by max_processes",
          "[escape][userns][limits][fork][docker]") {
  Scratch s;
  auto policy = confined(s.root());
  policy.limits["max_processes"] = "20";
  auto ok = run_cordon(s, policy, {probe("bomb"), "fork", "5"});
  if (!running_as_root() && ok.error_code() == "CRD1001") {
    WARN("the backend refuses limit.processes for an unprivileged caller");
    check_refused(ok, "limit.processes");
    return;
  }
  require_ran(ok);
  INFO(ok.describe());
  CHECK(ok.line("fork") == "OK made 5");
  Ran bomb = run_bomb(s, policy, {"fork", "100000"});
  INFO(bomb.describe());
  CHECK_THAT(bomb.line("fork"), IsErr({"EAGAIN"}));
  CHECK(count_after(bomb.line("fork")) >= 1);
  CHECK(count_after(bomb.line("fork")) < 20);
}

TEST_CASE("escape: a descriptor bomb is contained by max_open_files",
          "[escape][userns][limits][files][docker]") {
  Scratch s;
  auto policy = confined(s.root());
  policy.limits["max_open_files"] = "32";
  auto ok = run_probe(s, policy, "bomb", {"fds", "16"});
  INFO(ok.describe());
  CHECK(ok.line("fds") == "OK opened 16");
  Ran bomb = run_bomb(s, policy, {"fds", "1000000"});
  INFO(bomb.describe());
  CHECK_THAT(bomb.line("fds"), IsErr({"EMFILE"}));
  CHECK(count_after(bomb.line("fds")) < 32);
}

TEST_CASE("escape: cpu_seconds kills a spinning command", "[escape][userns][limits][cpu][docker]") {
  Scratch s;
  auto policy = confined(s.root());
  policy.limits["cpu_seconds"] = "1";
  auto ok = run_probe(s, policy, "lifeprobe", {"spin", "200"});
  INFO(ok.describe());
  CHECK_THAT(ok.line("spin"), IsOk());
  CHECK(ok.proc.status == 0);
  RunExtras extras;
  extras.json = true;
  auto spun = run_cordon(s, policy, {probe("lifeprobe"), "spin", "20000"}, extras);
  require_ran(spun);
  INFO(spun.describe());
  CHECK(spun.lines("spin").empty());
  CHECK((spun.json->signal == SIGXCPU || spun.json->signal == SIGKILL));
  CHECK(spun.proc.status == 128 + spun.json->signal);
  CHECK_FALSE(spun.json->timed_out);
  CHECK(spun.proc.wall < std::chrono::seconds(10));
}

TEST_CASE("escape: max_file_size_mb stops a file from growing past it",
          "[escape][userns][limits][fsize][docker]") {
  Scratch s;
  auto policy = confined(s.root());
  policy.limits["max_file_size_mb"] = "2";
  auto ok = run_probe(s, policy, "bomb", {"fsize", "1", "small.bin"});
  INFO(ok.describe());
  CHECK_THAT(ok.line("fsize"), IsOk());
  auto big = run_probe(s, policy, "bomb", {"fsize", "8", "big.bin"});
  INFO(big.describe());
  CHECK(big.line("fsize") == "ERR EFBIG (File too large) after 2");
}
