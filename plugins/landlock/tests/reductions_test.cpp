// The test knobs CORDON_LANDLOCK_MAX_ABI and CORDON_CGROUPS: they make the backend use and claim
// less than the host offers, never more, and a reduced backend says so.
#include <cordon/sdk/capabilities.hpp>

#include <unistd.h>

#include <algorithm>

#include <cordon/sdk/cgroup.hpp>
#include "probe_cache.hpp"
#include "reductions.hpp"
#include "ruleset.hpp"
#include "support.hpp"

using namespace cordon;
using namespace cordon::landlock;
using namespace cordon::landlock::test;

namespace {

// The kernel's own ABI, whatever knob this process was started with.
int kernel_abi() {
  ScopedEnv unset("CORDON_LANDLOCK_MAX_ABI", nullptr);
  return landlock_abi();
}

bool has_fact(const ProbeResult& r, const std::string& text) {
  return std::any_of(r.facts.begin(), r.facts.end(),
                     [&](const std::string& f) { return f.find(text) != std::string::npos; });
}

}  // namespace

TEST_CASE("reductions: CORDON_LANDLOCK_MAX_ABI lowers the ABI and never raises it",
          "[reductions]") {
  int real = kernel_abi();
  if (!needs(real >= 1, "Landlock is not available here")) return;
  {
    ScopedEnv cap("CORDON_LANDLOCK_MAX_ABI", "1");
    CHECK(landlock_abi() == 1);
    CHECK(landlock_abi_ceiling() == 1);
    CHECK(abi_knob() == "CORDON_LANDLOCK_MAX_ABI=1");
  }
  {
    std::string above = std::to_string(real + 3);
    ScopedEnv cap("CORDON_LANDLOCK_MAX_ABI", above.c_str());
    CHECK(landlock_abi() == real);
  }
  for (const char* not_an_abi : {"0", "-1", "three", "3x", "99999999999"}) {
    INFO(not_an_abi);
    ScopedEnv cap("CORDON_LANDLOCK_MAX_ABI", not_an_abi);
    CHECK(landlock_abi() < 1);  // Landlock counts as absent
  }
  // The backend is then unavailable, and says why.
  ScopedEnv none("CORDON_LANDLOCK_MAX_ABI", "0");
  LandlockBackend absent(BackendContext{"landlock", nullptr, {}});
  CHECK_FALSE(absent.probe().available);
  CHECK(absent.probe().reason.find("CORDON_LANDLOCK_MAX_ABI=0") != std::string::npos);
  ScopedEnv empty("CORDON_LANDLOCK_MAX_ABI", "");  // as unset
  CHECK(landlock_abi() == real);
  CHECK(landlock_abi_ceiling() == -1);
}

TEST_CASE("reductions: CORDON_CGROUPS=off leaves the probe without cgroups, and says so",
          "[reductions]") {
  ScopedEnv off("CORDON_CGROUPS", "off");
  auto none = probe_cgroups_unless_off(::geteuid());
  CHECK(none.version == sdk::CgroupVersion::none);
  CHECK_FALSE((none.memory || none.pids || none.cpu));
  CHECK(none.evidence.find("CORDON_CGROUPS=off") != std::string::npos);
  CHECK(cgroups_knob() == "CORDON_CGROUPS=off");
  // Any other value but "auto" takes them away too; "auto" and "" leave them as found.
  ScopedEnv other("CORDON_CGROUPS", "on");
  CHECK(probe_cgroups_unless_off(::geteuid()).version == sdk::CgroupVersion::none);
  ScopedEnv unset("CORDON_CGROUPS", nullptr);
  auto found = probe_cgroups_unless_off(::geteuid());
  ScopedEnv automatic("CORDON_CGROUPS", "auto");
  CHECK(probe_cgroups_unless_off(::geteuid()).version == found.version);
  CHECK(cgroups_knob().empty());
}

TEST_CASE("reductions: the probe cache's fingerprint names the knobs",
          "[reductions][probe-cache]") {
  ScopedEnv no_abi("CORDON_LANDLOCK_MAX_ABI", nullptr);
  ScopedEnv no_cgroups("CORDON_CGROUPS", nullptr);
  auto full = probe_fingerprint();
  ScopedEnv off("CORDON_CGROUPS", "off");
  auto without_cgroups = probe_fingerprint();
  CHECK(without_cgroups != full);
  CHECK(without_cgroups.find("CORDON_CGROUPS=off") != std::string::npos);
  ScopedEnv cap("CORDON_LANDLOCK_MAX_ABI", "1");
  CHECK(probe_fingerprint() != without_cgroups);
}

TEST_CASE("reductions: a reduced backend proves less, says so, and refuses what it lost",
          "[userns][reductions]") {
  if (!sandbox_available()) return;
  if (!needs(kernel_abi() >= 4, "Landlock ABI 4 (TCP port rules) to take away")) return;
  ScopedEnv cap("CORDON_LANDLOCK_MAX_ABI", "3");
  ScopedEnv off("CORDON_CGROUPS", "off");
  LandlockBackend reduced_backend(BackendContext{"landlock", nullptr, {}});
  const auto& p = reduced_backend.probe();
  REQUIRE(p.available);
  CHECK(p.facts.front() == "Landlock ABI 3");
  CHECK(has_fact(p, "reduced for testing by CORDON_LANDLOCK_MAX_ABI=3 CORDON_CGROUPS=off"));
  for (auto lost : {cap::net_ports, cap::limit_memory, cap::limit_cpu_share}) {
    INFO(lost << ": " << p.evidence(lost));
    CHECK_FALSE(p.proves(lost));
  }
  CHECK(p.evidence(cap::net_ports).find("ABI 4") != std::string::npos);
  CHECK(p.evidence(cap::limit_memory).find("CORDON_CGROUPS=off") != std::string::npos);
  TempDir ws;
  auto policy = base_policy(ws.path(), "/nonexistent-home");
  policy.network.connect_ports = {443};
  CaptureSink refused_out;
  auto refused =
      reduced_backend.run(make_plan(policy, ws.path(), {"/bin/echo", "ran"}), refused_out);
  REQUIRE(refused.error);
  CHECK(refused.error->code() == "CRD1001");
  CHECK(refused.error->message().find(cap::net_ports) != std::string::npos);
  CHECK(refused_out.out.empty());
  // What it still proves runs, on the lower ABI.
  CaptureSink sink;
  auto r = reduced_backend.run(
      make_plan(base_policy(ws.path(), "/nonexistent-home"), ws.path(), {"/bin/echo", "ran"}),
      sink);
  INFO((r.error ? r.error->render() : std::string()));
  REQUIRE_FALSE(r.error);
  CHECK(sink.out == "ran\n");
  bool abi3 = std::any_of(r.report.begin(), r.report.end(), [](const auto& e) {
    return e.mechanism.find("Landlock ABI 3") != std::string::npos;
  });
  CHECK(abi3);
}
