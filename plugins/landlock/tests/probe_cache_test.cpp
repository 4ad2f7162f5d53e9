// The probe cache: what it keeps, when it is not trusted, and that a forged entry cannot make a
// run weaker — the run fails closed and the entry is dropped.
#include <sys/stat.h>
#include <unistd.h>
#include <cordon/capabilities.hpp>

#include <chrono>
#include <fstream>
#include <optional>

#include "probe_cache.hpp"
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
  f.cgroups.version = CgroupVersion::v1;
  f.cgroups.memory = true;
  f.cgroups.memory_dir = "/sys/fs/cgroup/memory";
  f.cgroups.evidence = "cgroup v1";
  f.micros = 1234;
  return f;
}

// A private directory of the current user for a backend's state.
struct StateDir {
  TempDir dir{"cordon-state-", ::geteuid()};
  std::filesystem::path backend() const { return dir.path() / "landlock"; }
  std::filesystem::path file() const { return *probe_cache_file(backend()); }
};

// A state directory holding a probe just proven here, and what its cache file says.
struct ProvenCache {
  StateDir state;
  std::string fingerprint = probe_fingerprint();
  std::string settings;
  std::optional<ProbeFacts> facts;

  ProvenCache() {
    LandlockBackend prover(BackendContext{"landlock", nullptr, state.backend()});
    REQUIRE(prover.probe().available);
    facts = load_probe_cache(state.file(), fingerprint, nullptr, &settings);
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
  auto now = std::chrono::system_clock::now();
  auto text = encode_probe_facts(sample_facts(), "fp", now);
  std::chrono::system_clock::time_point at;
  auto back = decode_probe_facts(text, "fp", now + 1s, &at);
  REQUIRE(back);
  CHECK(back->abi == 7);
  CHECK(back->landlock);
  CHECK(back->cgroups.version == CgroupVersion::v1);
  CHECK(back->cgroups.memory_dir == "/sys/fs/cgroup/memory");
  CHECK(back->netns_evidence == "a network namespace");
  CHECK(back->micros == 1234);
  CHECK(std::chrono::duration_cast<std::chrono::milliseconds>(now - at).count() == 0);
}

TEST_CASE("probe cache: another fingerprint, age or shape is not trusted", "[probe-cache]") {
  auto now = std::chrono::system_clock::now();
  auto text = encode_probe_facts(sample_facts(), "fp", now);
  CHECK(decode_probe_facts(text, "fp", now + 1s, nullptr));
  CHECK_FALSE(decode_probe_facts(text, "other", now + 1s, nullptr));
  CHECK_FALSE(decode_probe_facts(text, "fp", now + kProbeCacheTtl, nullptr));
  CHECK_FALSE(decode_probe_facts(text, "fp", now - 1min, nullptr));  // from the future
  CHECK_FALSE(decode_probe_facts("{", "fp", now, nullptr));
  CHECK_FALSE(decode_probe_facts("[]", "fp", now, nullptr));
  auto missing = text;
  missing.replace(missing.find("\"landlock\""), 10, "\"landlocx\"");
  CHECK_FALSE(decode_probe_facts(missing, "fp", now, nullptr));
}

TEST_CASE("probe cache: the fingerprint names what the answer depends on", "[probe-cache]") {
  auto fp = probe_fingerprint();
  CHECK(fp == probe_fingerprint());
  for (const char* part : {"boot ", "kernel ", "ids ", "abi ", "cgroup ", "plugin "})
    CHECK(fp.find(part) != std::string::npos);
  auto settings = kernel_settings();
  CHECK(settings == kernel_settings());
  for (const char* part : {"/proc/sys/user/max_user_namespaces",
                           "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
                           "/proc/sys/kernel/seccomp/actions_avail"})
    CHECK(settings.find(part) != std::string::npos);
}

TEST_CASE("probe cache: the kernel settings are kept with the facts", "[probe-cache]") {
  auto now = std::chrono::system_clock::now();
  auto text = encode_probe_facts(sample_facts(), "fp", now, "max 5\n");
  std::string settings;
  REQUIRE(decode_probe_facts(text, "fp", now + 1s, nullptr, &settings));
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
  store_probe_cache(s.file(), *c.facts, c.fingerprint, "/proc/sys/user/max_user_namespaces 0\n");
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

TEST_CASE("probe cache: only a private file of the caller is read", "[probe-cache]") {
  StateDir s;
  auto fp = probe_fingerprint();
  store_probe_cache(s.file(), sample_facts(), fp);
  struct stat st {};
  REQUIRE(::stat(s.file().c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  REQUIRE(::stat(s.backend().c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  CHECK(load_probe_cache(s.file(), fp, nullptr));
  ::chmod(s.file().c_str(), 0644);
  CHECK_FALSE(load_probe_cache(s.file(), fp, nullptr));
  ::chmod(s.file().c_str(), 0600);
  ::chmod(s.backend().c_str(), 0777);
  CHECK_FALSE(load_probe_cache(s.file(), fp, nullptr));
  // A shared directory is never used, nor re-permitted.
  store_probe_cache("/tmp/probe.json", sample_facts(), fp);
  REQUIRE(::stat("/tmp", &st) == 0);
  CHECK((st.st_mode & 07777) == 01777);
  CHECK_FALSE(std::filesystem::exists("/tmp/probe.json"));
  ::chmod(s.backend().c_str(), 0700);
  std::filesystem::path link = s.backend() / "link.json";
  std::filesystem::create_symlink(s.file(), link);
  CHECK_FALSE(load_probe_cache(link, fp, nullptr));
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
  // Claim a memory cgroup that does not exist.
  facts->cgroups.version = CgroupVersion::v1;
  facts->cgroups.memory = true;
  facts->cgroups.memory_dir = (s.dir.path() / "no-such-cgroup").string();
  store_probe_cache(s.file(), *facts, c.fingerprint);

  LandlockBackend fooled(BackendContext{"landlock", nullptr, s.backend()});
  REQUIRE(from_cache(fooled.probe()));
  CHECK(fooled.probe().proves(cap::limit_memory));
  TempDir ws;
  auto policy = base_policy(ws.path(), "/nonexistent-home");
  policy.limits.memory_mb = 64;
  CaptureSink sink;
  auto r = fooled.run(make_plan(policy, ws.path(), {"/bin/echo", "ran"}), sink);
  REQUIRE(r.error);
  CHECK(r.error->code() == "CRD1003");
  CHECK(sink.out.empty());
  CHECK_FALSE(std::filesystem::exists(s.file()));
  LandlockBackend after(BackendContext{"landlock", nullptr, s.backend()});
  CHECK_FALSE(from_cache(after.probe()));
}
