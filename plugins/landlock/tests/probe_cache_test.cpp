// landlock's probe cache: what it keeps, and that a forged entry — written by its owner, as a
// sandbox of an unprivileged cordon could — can only ever cost a re-probe: the next run is
// neither weakened nor refused. The file, its fingerprint and age are the SDK's
// (tests/unit/sdk_probe_cache_test.cpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cordon/sdk/capabilities.hpp>

#include <boost/json.hpp>

#include <chrono>
#include <ctime>
#include <fstream>
#include <optional>

#include "aged_file.hpp"
#include "probe_cache.hpp"
#include "reductions.hpp"
#include "ruleset.hpp"
#include "support.hpp"

using namespace cordon;
using namespace cordon::landlock;
using namespace cordon::landlock::test;
using namespace std::chrono_literals;

namespace {

ProbeFacts sample_facts() {
  ProbeFacts f;
  f.root = true;
  f.abi = 7;
  f.namespaces = f.fresh_proc = f.identity = f.landlock = f.seccomp = f.netns = true;
  f.netns_evidence = "a network namespace";
  f.cgroups.version = sdk::CgroupVersion::v1;
  f.cgroups.memory = true;
  f.cgroups.memory_dir = "/sys/fs/cgroup/memory";
  f.cgroups.evidence = "cgroup v1";
  f.micros = 1234;
  return f;
}

// Sample facts that a load here would trust: this caller, the kernel's ABI, nothing denied.
ProbeFacts trusted_facts() {
  ProbeFacts f = sample_facts();
  f.root = ::geteuid() == 0;
  f.abi = landlock_abi();
  f.nproc_per_userns = true;
  return f;
}

// A private directory of the current user for a backend's state, and its cache.
struct StateDir {
  TempDir dir{"cordon-state-", ::geteuid()};
  std::filesystem::path backend() const { return dir.path() / "landlock"; }
  sdk::ProbeCache cache() const {
    auto c = open_probe_cache(backend());
    REQUIRE(c);
    return *c;
  }
  std::filesystem::path file() const { return cache().file(); }
};

// A state directory holding a probe just proven here, and what its cache file says.
struct ProvenCache {
  StateDir state;
  sdk::ProbeCache cache = state.cache();
  std::string settings;
  std::optional<ProbeFacts> facts;

  ProvenCache() {
    LandlockBackend prover(BackendContext{"landlock", nullptr, state.backend()});
    REQUIRE(prover.probe().available);
    facts = load_probe_cache(cache, nullptr, &settings);
    REQUIRE(facts);
  }
};

bool from_cache(const ProbeResult& r) {
  for (const auto& f : r.facts)
    if (f.find("by an earlier cordon process") != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("probe cache: facts survive the round trip", "[probe-cache]") {
  auto back = decode_probe_facts(encode_probe_facts(sample_facts()));
  REQUIRE(back);
  CHECK(back->abi == 7);
  CHECK(back->landlock);
  CHECK(back->cgroups.version == sdk::CgroupVersion::v1);
  CHECK(back->cgroups.memory_dir == "/sys/fs/cgroup/memory");
  CHECK(back->netns_evidence == "a network namespace");
  CHECK(back->micros == 1234);
}

TEST_CASE("probe cache: facts of another shape are not decoded", "[probe-cache]") {
  auto v = encode_probe_facts(sample_facts());
  v.as_object().erase("landlock");
  CHECK_FALSE(decode_probe_facts(v));
  v = encode_probe_facts(sample_facts());
  v.as_object()["cgroups"].as_object()["version"] = 9;
  CHECK_FALSE(decode_probe_facts(v));
  CHECK_FALSE(decode_probe_facts(boost::json::array{}));
}

TEST_CASE("probe cache: the fingerprint names what the answer depends on", "[probe-cache]") {
  StateDir s;
  auto fp = s.cache().fingerprint();
  CHECK(fp == s.cache().fingerprint());
  CHECK(fp.find(fingerprint_extras()) != std::string::npos);
  for (const char* part :
       {"boot ", "kernel ", "ids ", "abi ", "cgroup ", "code ", "landlock facts "})
    CHECK(fp.find(part) != std::string::npos);
  CHECK(s.file().filename().string().rfind("probe-", 0) == 0);
  auto settings = kernel_settings();
  CHECK(settings == kernel_settings());
  for (const char* part : {"/proc/sys/user/max_user_namespaces",
                           "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
                           "/proc/sys/kernel/seccomp/actions_avail"})
    CHECK(settings.find(part) != std::string::npos);
}

TEST_CASE("probe cache: the kernel settings are kept with the facts", "[probe-cache]") {
  std::string settings;
  REQUIRE(decode_probe_facts(encode_probe_facts(sample_facts(), "max 5\n"), &settings));
  CHECK(settings == "max 5\n");
}

TEST_CASE("probe cache: an entry made under other kernel settings is dropped by the run",
          "[probe-cache][userns]") {
  if (!sandbox_available()) return;
  ProvenCache c;
  const StateDir& s = c.state;
  CHECK(c.settings == kernel_settings());
  // An entry whose settings match is kept by a run.
  TempDir ws;
  auto policy = base_policy(ws.path(), "/nonexistent-home");
  {
    LandlockBackend kept(BackendContext{"landlock", nullptr, s.backend()});
    REQUIRE(from_cache(kept.probe()));
    CaptureSink sink;
    auto r = kept.run(make_plan(policy, ws.path(), {"/bin/true"}), sink);
    CHECK_FALSE(r.error);
    CHECK(std::filesystem::exists(s.file()));
  }
  store_probe_cache(c.cache, *c.facts, "/proc/sys/user/max_user_namespaces 0\n");
  LandlockBackend stale(BackendContext{"landlock", nullptr, s.backend()});
  REQUIRE(from_cache(stale.probe()));
  CaptureSink sink;
  auto r = stale.run(make_plan(policy, ws.path(), {"/bin/echo", "ran"}), sink);
  CHECK_FALSE(r.error);  // the run itself proves what it uses
  CHECK(sink.out == "ran\n");
  CHECK_FALSE(std::filesystem::exists(s.file()));
  bool noted = false;
  for (const auto& n : r.notes) noted = noted || n.find("settings changed") != std::string::npos;
  CHECK(noted);
}

TEST_CASE("probe cache: an entry is believed through the SDK's checks only", "[probe-cache]") {
  if (landlock_abi() < 1) {
    WARN("skipped: no Landlock here, so no entry is trusted at all");
    return;
  }
  StateDir s;
  auto cache = s.cache();
  store_probe_cache(cache, trusted_facts());
  CHECK(load_probe_cache(cache, nullptr));
  ::chmod(cache.file().c_str(), 0644);  // one of the SDK's refusals (the rest: its tests)
  CHECK_FALSE(load_probe_cache(cache, nullptr));
  ::chmod(cache.file().c_str(), 0600);
  CHECK(load_probe_cache(cache, nullptr));
  ::setenv("CORDON_PROBE_CACHE", "off", 1);
  CHECK_FALSE(open_probe_cache(s.backend()));
  ::unsetenv("CORDON_PROBE_CACHE");
}

TEST_CASE("probe cache: a second backend object takes the proof, CORDON_PROBE_CACHE=off does not",
          "[probe-cache][userns]") {
  if (!sandbox_available()) return;
  StateDir s;
  LandlockBackend first(BackendContext{"landlock", nullptr, s.backend()});
  const auto& proven = first.probe();
  REQUIRE(proven.available);
  CHECK_FALSE(from_cache(proven));
  REQUIRE(std::filesystem::exists(s.file()));
  LandlockBackend second(BackendContext{"landlock", nullptr, s.backend()});
  const auto& cached = second.probe();
  CHECK(from_cache(cached));
  CHECK(cached.proofs == proven.proofs);
  ::setenv("CORDON_PROBE_CACHE", "off", 1);
  LandlockBackend third(BackendContext{"landlock", nullptr, s.backend()});
  CHECK_FALSE(from_cache(third.probe()));
  ::unsetenv("CORDON_PROBE_CACHE");
}

TEST_CASE("probe cache: a forged entry cannot weaken a run, and is dropped",
          "[probe-cache][userns]") {
  if (!sandbox_available()) return;
  ProvenCache c;
  const StateDir& s = c.state;
  auto& facts = c.facts;
  // Claim a cgroup that exists but is no sandbox's: the run's own groups would be made in it.
  facts->cgroups.version = sdk::CgroupVersion::v1;
  facts->cgroups.memory = facts->cgroups.pids = facts->cgroups.cpu = true;
  facts->cgroups.memory_dir = facts->cgroups.pids_dir = facts->cgroups.cpu_dir =
      (s.dir.path() / "no-such-cgroup").string();
  store_probe_cache(c.cache, *facts);
  LandlockBackend fooled(BackendContext{"landlock", nullptr, s.backend()});
  CHECK_FALSE(from_cache(fooled.probe()));  // probed again
  TempDir ws;
  auto policy = base_policy(ws.path(), "/nonexistent-home");
  CaptureSink sink;
  auto r = fooled.run(make_plan(policy, ws.path(), {"/bin/echo", "ran"}), sink);
  CHECK_FALSE(r.error);
  CHECK(sink.out == "ran\n");
}

TEST_CASE("probe cache: a forged Landlock ABI is not used, and runs use the kernel's",
          "[probe-cache][userns]") {
  if (!sandbox_available()) return;
  ProvenCache c;
  const StateDir& s = c.state;
  // ABI 1 has no TCP port rules; where the kernel has only ABI 1, a higher one is forged.
  auto forged = *c.facts;
  forged.abi = landlock_abi() > 1 ? 1 : 7;
  store_probe_cache(c.cache, forged, c.settings);
  LandlockBackend next(BackendContext{"landlock", nullptr, s.backend()});
  const auto& probe = next.probe();
  CHECK_FALSE(from_cache(probe));
  CHECK(probe.proves(cap::net_ports) == (landlock_abi() >= 4));
  TempDir ws;
  auto policy = base_policy(ws.path(), "/nonexistent-home");
  CaptureSink sink;
  auto r = next.run(make_plan(policy, ws.path(), {"/bin/true"}), sink);
  REQUIRE_FALSE(r.error);
  std::string abi = "Landlock ABI " + std::to_string(landlock_abi());
  bool named = false;
  for (const auto& e : r.report) named |= e.mechanism.find(abi) != std::string::npos;
  CHECK(named);
  // The allowed twin: the entry as proven is taken.
  store_probe_cache(c.cache, *c.facts, c.settings);
  LandlockBackend twin(BackendContext{"landlock", nullptr, s.backend()});
  CHECK(from_cache(twin.probe()));
}

TEST_CASE("probe cache: a forged failure or \"cannot\" is probed again, never believed",
          "[probe-cache][userns]") {
  if (!sandbox_available()) return;
  ProvenCache c;
  const StateDir& s = c.state;
  auto forge = [&](auto change) {
    auto f = *c.facts;
    change(f);
    store_probe_cache(c.cache, f, c.settings);
    LandlockBackend next(BackendContext{"landlock", nullptr, s.backend()});
    const auto& probe = next.probe();
    CHECK_FALSE(from_cache(probe));
    CHECK(probe.available);
    CHECK(probe.proves(cap::net_deny));
    TempDir ws;
    CaptureSink sink;
    auto r = next.run(
        make_plan(base_policy(ws.path(), "/nonexistent-home"), ws.path(), {"/bin/echo", "ran"}),
        sink);
    CHECK_FALSE(r.error);
    CHECK(sink.out == "ran\n");
  };
  SECTION("a failure") {
    forge([](ProbeFacts& f) { f.failure = "forged: cannot create user namespaces"; });
  }
  SECTION("no Landlock") {
    forge([](ProbeFacts& f) { f.landlock = false; });
  }
  SECTION("no seccomp") {
    forge([](ProbeFacts& f) { f.seccomp = false; });
  }
  SECTION("no network namespace") {
    forge([](ProbeFacts& f) { f.netns = false; });
  }
  SECTION("another caller") {
    forge([](ProbeFacts& f) { f.root = !f.root; });
  }
}

TEST_CASE("probe cache: cgroups a forged entry denies are looked for again", "[probe-cache]") {
  StateDir s;
  auto cache = s.cache();
  auto real = probe_cgroups_unless_off(::geteuid());
  auto f = sample_facts();
  f.root = ::geteuid() == 0;
  f.abi = landlock_abi();
  f.nproc_per_userns = true;
  f.cgroups = sdk::CgroupSupport{};  // "no cgroups"
  f.cgroups.evidence = "forged";
  store_probe_cache(cache, f);
  auto loaded = load_probe_cache(cache, nullptr);
  if (f.abi < 1) return;  // no Landlock here: nothing is trusted at all
  REQUIRE(loaded);
  CHECK(loaded->cgroups.version == real.version);
  CHECK(loaded->cgroups.memory == real.memory);
  CHECK(loaded->cgroups.evidence == real.evidence);
}

TEST_CASE("probe cache: storing a probe removes stale applet lists with stale probes",
          "[probe-cache]") {
  StateDir s;
  auto cache = s.cache();
  store_probe_cache(cache, trusted_facts());
  auto put = [&](const std::string& name, std::chrono::seconds age) {
    std::filesystem::path p = s.backend() / name;
    REQUIRE(cordon::testing::write_aged_file(p, age));
    return p;
  };
  auto stale = std::chrono::duration_cast<std::chrono::seconds>(sdk::kProbeCacheStaleAfter) + 60s;
  auto old_probe = put("probe-0000000000000000.json", stale);
  auto old_applets = put("applets-0000000000000000", stale);
  auto recent = put("applets-1111111111111111", 60s);
  auto other = put("not-ours", stale);
  store_probe_cache(cache, trusted_facts());
  CHECK_FALSE(std::filesystem::exists(old_probe));
  CHECK_FALSE(std::filesystem::exists(old_applets));
  CHECK(std::filesystem::exists(recent));
  CHECK(std::filesystem::exists(other));
  CHECK(std::filesystem::exists(cache.file()));
}
