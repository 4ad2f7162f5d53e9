// cordon's exit status is the command's: its own code, 124 on timeout, 126 not executable,
// 127 not found, 128+n killed by signal n; and the --json object says the same.
#include <signal.h>

#include <catch2/catch.hpp>

#include "cordon_run.hpp"
#include "probes.hpp"

using namespace escape;

namespace {

Ran run_plain(Scratch& s, const std::vector<std::string>& command,
              const std::string& timeout = "60s") {
  auto policy = confined(s.root());
  policy.limits["timeout"] = toml_duration(timeout);
  RunExtras plain;
  plain.json = false;
  return run_cordon(s, policy, command, plain);
}

}  // namespace

TEST_CASE("escape: exit codes 0 and 3 are the command's own", "[escape][userns][exit][docker]") {
  Scratch s;
  for (int code : {0, 3}) {
    auto plain = run_plain(s, {probe("lifeprobe"), "exit", std::to_string(code)});
    INFO(plain.describe());
    CHECK(plain.proc.status == code);
    auto json = run_probe(s, confined(s.root()), "lifeprobe", {"exit", std::to_string(code)});
    INFO(json.describe());
    CHECK(json.json->exit_code == code);
    CHECK(json.json->signal == 0);
    CHECK(json.proc.status == code);
  }
}

TEST_CASE("escape: a program that exists but cannot be executed gives 126",
          "[escape][userns][exit][docker]") {
  Scratch s;
  s.write(s.ws() + "/script.txt", "#!/bin/sh\necho not executable\n", 0644);
  s.mkdir(s.ws() + "/a-directory");
  auto ok = run_plain(s, {probe("lifeprobe"), "exit", "0"});
  INFO(ok.describe());
  CHECK(ok.proc.status == 0);
  for (const auto& target : {s.ws() + "/script.txt", s.ws() + "/a-directory"}) {
    auto ran = run_plain(s, {target});
    INFO(ran.describe());
    CHECK(ran.proc.status == 126);
    CHECK(ran.proc.out.find("not executable") == std::string::npos);
  }
}

TEST_CASE("escape: a program that does not exist gives 127", "[escape][userns][exit][docker]") {
  Scratch s;
  // On docker every program of the test image is its busybox, which provides su (blocked by
  // confined()) and is masked with it: the program that exists is the probe there.
  auto ok = run_plain(s, on_docker() ? std::vector<std::string>{probe("lifeprobe"), "exit", "0"}
                                     : std::vector<std::string>{"true"});
  INFO(ok.describe());
  CHECK(ok.proc.status == 0);
  for (const auto& target : {s.ws() + "/no-such-program", std::string("no-such-program-cordon")}) {
    auto ran = run_plain(s, {target});
    INFO(ran.describe());
    CHECK(ran.proc.status == 127);
  }
}

TEST_CASE("escape: a command killed by signal n gives 128+n",
          "[escape][userns][exit][signal][docker]") {
  Scratch s;
  for (int sig : {SIGUSR1, SIGKILL, SIGSEGV}) {
    auto plain = run_plain(s, {probe("lifeprobe"), "signal", std::to_string(sig)});
    INFO("signal " << sig << "\n" << plain.describe());
    CHECK(plain.proc.status == 128 + sig);
    auto json = run_probe(s, confined(s.root()), "lifeprobe", {"signal", std::to_string(sig)});
    INFO(json.describe());
    CHECK(json.json->signal == sig);
    CHECK(json.proc.status == 128 + sig);
  }
}

TEST_CASE("escape: a timed-out command gives 124", "[escape][userns][exit][timeout][docker]") {
  Scratch s;
  auto ok = run_plain(s, {probe("lifeprobe"), "sleep", "50"}, short_timeout(2));
  INFO(ok.describe());
  CHECK(ok.proc.status == 0);
  auto ran = run_plain(s, {probe("lifeprobe"), "sleep", "20000"}, short_timeout(1));
  INFO(ran.describe());
  CHECK(ran.proc.status == 124);
  CHECK(ran.proc.wall < std::chrono::seconds(10 + start_allowance()));
}
