// The environment is granted, not inherited: a caller's secrets stay out unless env.pass names
// them, and HOME is a private, empty 0700 directory rather than the caller's.
#include <unistd.h>

#include <catch2/catch.hpp>

#include "cordon_run.hpp"
#include "probes.hpp"

using namespace escape;
using Catch::Matchers::Contains;

namespace {

constexpr const char* kSecret = "s3cr3t-7f1e-cordon-escape";

/// Runs `lifeprobe env` with SECRET_TOKEN and OTHER_SECRET in cordon's own environment.
Ran env_run(Scratch& s, const PolicySpec& policy) {
  RunExtras extras;
  extras.set_env = {{"SECRET_TOKEN", kSecret}, {"OTHER_SECRET", kSecret}};
  return run_probe(s, policy, "lifeprobe", {"env"}, extras);
}

}  // namespace

TEST_CASE("escape: the caller's environment secrets are invisible unless passed",
          "[escape][userns][env][docker]") {
  Scratch s;
  auto hidden = env_run(s, confined(s.root()));
  INFO(hidden.describe());
  CHECK_THAT(hidden.out(), !Contains(kSecret));
  CHECK_THAT(hidden.out(), !Contains("SECRET_TOKEN"));
  auto policy = confined(s.root());
  policy.env_pass = std::vector<std::string>{"SECRET_TOKEN"};
  auto passed = env_run(s, policy);
  INFO(passed.describe());
  CHECK_THAT(passed.out(), Contains(std::string("env: SECRET_TOKEN=") + kSecret));
  CHECK_THAT(passed.out(), !Contains("OTHER_SECRET"));
}

TEST_CASE("escape: the command sees only the granted environment",
          "[escape][userns][env][docker]") {
  Scratch s;
  auto policy = confined(s.root());
  policy.env_set["GRANTED"] = "yes";
  RunExtras extras;
  extras.set_env = {{"LD_PRELOAD", "/nonexistent/evil.so"}, {"SSH_AUTH_SOCK", "/tmp/agent"}};
  auto ran = run_probe(s, policy, "lifeprobe", {"env"}, extras);
  INFO(ran.describe());
  std::set<std::string> names;
  for (const auto& line : ran.lines("env")) names.insert(line.substr(0, line.find('=')));
  CHECK(names.count("GRANTED") == 1);
  CHECK(names.count("PATH") == 1);
  CHECK(names.count("HOME") == 1);
  CHECK_THAT(ran.out(), Contains("env: LANG=C.UTF-8"));
  // Nothing beyond the baseline (PATH, HOME, LANG, TZ) and what the policy set. The docker
  // daemon always adds HOSTNAME: the container's name, set by cordon, nothing of the caller's.
  if (on_docker()) CHECK_THAT(ran.out(), Contains("env: HOSTNAME=cordon\n"));
  for (const auto& name : names)
    CHECK((name == "PATH" || name == "HOME" || name == "LANG" || name == "TZ" ||
           name == "GRANTED" || (on_docker() && name == "HOSTNAME")));
}

TEST_CASE("escape: HOME is private, empty and not the caller's",
          "[escape][userns][env][home][docker]") {
  Scratch s;
  std::string host_home = s.path("host-home");
  s.mkdir(host_home);
  s.write(host_home + "/.netrc", "machine example login me password hunter2");
  RunExtras extras;
  extras.set_env = {{"HOME", host_home}};
  auto ran = run_probe(s, confined(s.root()), "lifeprobe", {"home"}, extras);
  INFO(ran.describe());
  CHECK_THAT(ran.line("home"), IsOk());
  CHECK_THAT(ran.line("home"), Contains("mode=0700"));
  CHECK_THAT(ran.line("home"), Contains("entries=[]"));
  // The sandbox owns its HOME (uid as seen inside) and can write there.
  auto line = ran.line("home");
  auto at = line.find(" uid=") + 5;
  CHECK_THAT(line, Contains("me=" + line.substr(at, line.find(' ', at) - at)));
  CHECK_THAT(ran.line("home-write"), IsOk());
  // The caller's home is not reachable under its own name either (the private HOME may be
  // mounted at that path, but empty).
  auto host = run_probe(s, confined(s.root()), "fsop",
                        {"list", host_home, "read", host_home + "/.netrc"}, extras);
  INFO(host.describe());
  CHECK_THAT(host.line("list " + host_home), IsErr(kReadDenied) || Contains("OK []"));
  CHECK_THAT(host.line("read " + host_home + "/.netrc"), IsErr(kReadDenied));
  CHECK_THAT(host.out(), !Contains("hunter2"));
}
