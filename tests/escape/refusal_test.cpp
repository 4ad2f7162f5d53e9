// cordon refuses before exec (status 125, a CRDnxxx code) when it cannot do what was asked: a
// malformed policy, an unknown backend, a requirement the backend cannot prove. The refused
// command never runs; the well-formed one does.
#include <catch2/catch.hpp>
#include <cstdio>

#include "cordon_run.hpp"
#include "host.hpp"
#include "probes.hpp"

using namespace escape;
using Catch::Matchers::Contains;

namespace {

/// The command every refusal test tries to run: it leaves a file in the workspace if it ran.
std::vector<std::string> witness(const Scratch& s) {
  return {probe("fsop"), "create", s.ws() + "/ran.txt"};
}

}  // namespace

TEST_CASE("escape: a malformed policy is refused before exec",
          "[escape][userns][refusal][docker]") {
  Scratch s;
  auto good = run_cordon(s, confined(s.root()), witness(s));
  require_ran(good);
  CHECK(exists(s.ws() + "/ran.txt"));
  std::remove((s.ws() + "/ran.txt").c_str());

  auto bad = confined(s.root());
  bad.limits["memry_mb"] = "64";
  RunExtras plain;
  plain.json = false;
  auto ran = run_cordon(s, bad, witness(s), plain);
  INFO(ran.describe());
  CHECK(ran.proc.status == 125);
  CHECK(ran.error_code() == "CRD2003");
  CHECK_THAT(ran.proc.err, Contains("memry_mb"));
  CHECK_FALSE(exists(s.ws() + "/ran.txt"));
}

TEST_CASE("escape: an unknown backend is refused before exec",
          "[escape][userns][refusal][docker]") {
  Scratch s;
  RunExtras extras;
  extras.json = false;
  extras.backend = "no-such-backend";
  auto ran = run_cordon(s, confined(s.root()), witness(s), extras);
  INFO(ran.describe());
  CHECK(ran.proc.status == 125);
  CHECK(ran.error_code() == "CRD3010");
  CHECK_FALSE(exists(s.ws() + "/ran.txt"));
  extras.backend.reset();
  auto good = run_cordon(s, confined(s.root()), witness(s), extras);
  INFO(good.describe());
  CHECK(good.proc.status == 0);
  CHECK(exists(s.ws() + "/ran.txt"));
}

TEST_CASE("escape: the default policy runs a command, or refuses what it cannot prove",
          "[escape][userns][refusal][default][docker]") {
  Scratch s;
  RunExtras extras;
  extras.with_policy = false;
  // true_program(): on docker the image's /bin/true is its busybox, which provides su (blocked
  // by the presets) and is masked with it.
  auto ran = run_cordon(s, PolicySpec{}, {true_program()}, extras);
  INFO(ran.describe());
  // `standard` asks for 512 MB in total: provable with a cgroup (root here), else refused.
  if (backend_would_run(s, nullptr)) {
    require_ran(ran);
    CHECK(ran.proc.status == 0);
    bool memory_reported = false;
    for (const auto& [cap, mech] : ran.json->report) memory_reported |= cap == "limit.memory";
    CHECK(memory_reported);
  } else {
    CHECK(ran.proc.status == 125);
    CHECK(ran.error_code() == "CRD1001");
    CHECK_THAT(ran.proc.err + (ran.json && ran.json->error ? ran.json->error->message : ""),
               Contains("limit.memory"));
  }
}

TEST_CASE("escape: every enforced requirement is reported with its mechanism",
          "[escape][userns][refusal][report][docker]") {
  Scratch s;
  auto ran = run_cordon(s, confined(s.root()), {true_program()});
  require_ran(ran);
  INFO(ran.describe());
  std::set<std::string> caps;
  for (const auto& [cap, mech] : ran.json->report) {
    CHECK_FALSE(mech.empty());
    caps.insert(cap);
  }
  for (const char* cap : {"fs.read.confine", "fs.write.confine", "net.deny", "proc.isolate",
                          "env.grant", "home.private", "identity.unprivileged", "limit.timeout"})
    CHECK(caps.count(cap) == 1);
}
