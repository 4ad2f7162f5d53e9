// cordon/sdk/probe_cache.hpp: a valid entry is used, and one of another fingerprint, too old,
// from the future, malformed, of another owner, loosely permitted, reached through a symlink or
// in a directory that is not cordon's own is not — each checked both ways. What a backend
// believes of an entry's facts (no cached failure or "cannot") is the backend's: the landlock
// tests forge those (plugins/landlock/tests/probe_cache_test.cpp).
#include <catch2/catch.hpp>
#include <cordon/sdk/error.hpp>
#include <cordon/sdk/probe_cache.hpp>
#include <cordon/sdk/result.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/json.hpp>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <stdexcept>
#include "aged_file.hpp"

using namespace cordon;
using namespace std::chrono_literals;
namespace fs = std::filesystem;
namespace json = boost::json;
using sdk::ProbeCache;
using Clock = std::chrono::system_clock;

namespace {

// A function of this executable, standing for a backend's code.
void backend_code() {}
const void* const kCode = reinterpret_cast<const void*>(&backend_code);

// A fresh directory of our own under /tmp (root-owned and sticky), removed afterwards; the
// state directory is a level below it, made by the cache.
struct Scratch {
  fs::path base;
  Scratch() {
    char tmpl[] = "/tmp/cordon-pc-XXXXXX";
    REQUIRE(::mkdtemp(tmpl));
    base = tmpl;
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(base, ec);
  }
  fs::path state() const { return base / "backend"; }
};

ProbeCache open_cache(const fs::path& dir, sdk::ProbeCacheOptions options = {}) {
  options.code = kCode;
  auto cache = ProbeCache::open(dir, std::move(options));
  REQUIRE(cache);
  return *cache;
}

json::value sample_facts() { return json::object{{"works", true}, {"evidence", "a test"}}; }

mode_t mode_of(const fs::path& p) {
  struct stat st {};
  REQUIRE(::lstat(p.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

// Environment variable set for one scope.
struct ScopedEnv {
  std::string name;
  ScopedEnv(std::string n, const char* value) : name(std::move(n)) {
    ::setenv(name.c_str(), value, 1);
  }
  ~ScopedEnv() { ::unsetenv(name.c_str()); }
};

// Where probe_cgroups() puts v1 memory groups: the memory hierarchy's mount and this process's
// group in it; nullopt without one.
std::optional<std::string> v1_memory_dir() {
  std::ifstream mounts("/proc/self/mountinfo"), groups("/proc/self/cgroup");
  std::string line, mnt, group;
  while (mnt.empty() && std::getline(mounts, line)) {
    auto dash = line.find(" - cgroup ");
    if (dash == std::string::npos || (line + ",").find(",memory,", dash) == std::string::npos)
      continue;
    std::istringstream fields(line);
    for (int i = 0; i < 5; ++i) fields >> mnt;
  }
  while (group.empty() && std::getline(groups, line))
    if (auto at = line.find(":memory:"); at != std::string::npos) group = line.substr(at + 8);
  if (mnt.empty() || group.empty()) return std::nullopt;
  return mnt + group;
}

}  // namespace

TEST_CASE("sdk probe_cache: an entry round-trips its facts and the time they were proven",
          "[sdk][probe-cache]") {
  auto now = Clock::now();
  auto text = ProbeCache::encode(sample_facts(), "fp", now);
  auto back = ProbeCache::decode(text, "fp", now + 1s, 10min);
  REQUIRE(back);
  CHECK(back->facts == sample_facts());
  CHECK(std::chrono::duration_cast<std::chrono::milliseconds>(now - back->proven_at).count() == 0);
}

TEST_CASE("sdk probe_cache: another fingerprint, age or shape is not believed",
          "[sdk][probe-cache]") {
  auto now = Clock::now();
  auto text = ProbeCache::encode(sample_facts(), "fp", now);
  CHECK(ProbeCache::decode(text, "fp", now + 59s, 1min));
  CHECK_FALSE(ProbeCache::decode(text, "other", now + 1s, 1min));
  CHECK_FALSE(ProbeCache::decode(text, "fp", now + 1min, 1min));  // expired
  CHECK_FALSE(ProbeCache::decode(text, "fp", now - 1s, 1min));    // from the future
  CHECK_FALSE(ProbeCache::decode("{", "fp", now, 1min));
  CHECK_FALSE(ProbeCache::decode("[]", "fp", now, 1min));
  auto missing = text;
  missing.replace(missing.find("\"facts\""), 7, "\"factz\"");
  CHECK_FALSE(ProbeCache::decode(missing, "fp", now, 1min));
  auto mistyped = text;
  mistyped.replace(mistyped.find("\"proven_at_ms\":"), 15, "\"proven_at_ms\":\"0\",\"x\":");
  CHECK_FALSE(ProbeCache::decode(mistyped, "fp", now, 1min));
}

TEST_CASE("sdk probe_cache: the fingerprint names what an answer depends on",
          "[sdk][probe-cache]") {
  auto fp = sdk::probe_fingerprint(kCode);
  CHECK(fp == sdk::probe_fingerprint(kCode));
  for (const char* part : {"boot ", "kernel ", "ids ", "cgroup ", "uid_map ", "code "})
    CHECK(fp.find(part) != std::string::npos);
  CHECK(fp.find(fs::canonical("/proc/self/exe").string()) != std::string::npos);
  // The code of another file (libcordon-core's) is another fingerprint and another entry.
  const void* core = reinterpret_cast<const void*>(&sdk::probe_fingerprint);
  CHECK(sdk::probe_fingerprint(core) != fp);
  auto mine = open_cache("/nonexistent-state", {.fingerprint_extras = "abi 7\n"});
  auto theirs = ProbeCache::open("/nonexistent-state", {.code = core});
  REQUIRE(theirs);
  CHECK(mine.fingerprint() == fp + "abi 7\n");
  CHECK(mine.file().parent_path() == "/nonexistent-state");
  CHECK(mine.file().filename().string().rfind("probe-", 0) == 0);
  CHECK(mine.file() != theirs->file());
  CHECK_FALSE(fs::exists("/nonexistent-state"));  // opening creates nothing
}

TEST_CASE("sdk probe_cache: a stored entry is used, a dropped one is not", "[sdk][probe-cache]") {
  Scratch s;
  auto cache = open_cache(s.state());
  CHECK_FALSE(cache.load());
  cache.store(sample_facts());
  CHECK(mode_of(cache.file()) == 0600);
  CHECK(mode_of(s.state()) == 0700);
  auto hit = cache.load();
  REQUIRE(hit);
  CHECK(hit->facts == sample_facts());
  CHECK(Clock::now() - hit->proven_at < 1min);
  cache.drop();
  CHECK_FALSE(fs::exists(cache.file()));
  CHECK_FALSE(cache.load());
  cache.drop();  // nothing to drop
}

TEST_CASE("sdk probe_cache: an entry older than its TTL, or of another fingerprint, is not used",
          "[sdk][probe-cache]") {
  Scratch s;
  auto cache = open_cache(s.state(), {.ttl = 30s});
  cache.store(sample_facts(), Clock::now() - 20s);
  CHECK(cache.load());
  cache.store(sample_facts(), Clock::now() - 31s);
  CHECK_FALSE(cache.load());
  cache.store(sample_facts(), Clock::now() + 1h);
  CHECK_FALSE(cache.load());
  cache.store(sample_facts());
  REQUIRE(cache.load());
  auto changed = open_cache(s.state(), {.fingerprint_extras = "abi 2\n", .ttl = 30s});
  REQUIRE(changed.file() == cache.file());
  CHECK_FALSE(changed.load());
}

TEST_CASE("sdk probe_cache: only a private file, in a directory of cordon's own, is read",
          "[sdk][probe-cache]") {
  Scratch s;
  auto cache = open_cache(s.state());
  cache.store(sample_facts());
  REQUIRE(cache.load());
  ::chmod(cache.file().c_str(), 0640);
  CHECK_FALSE(cache.load());
  ::chmod(cache.file().c_str(), 0400);
  CHECK(cache.load());
  ::chmod(cache.file().c_str(), 0600);
  ::chmod(s.state().c_str(), 0770);
  CHECK_FALSE(cache.load());
  ::chmod(s.state().c_str(), 0700);
  ::chmod(s.base.c_str(), 0777);  // an ancestor others can write
  CHECK_FALSE(cache.load());
  ::chmod(s.base.c_str(), 0700);
  CHECK(cache.load());
}

TEST_CASE("sdk probe_cache: a file or directory of another owner is not read",
          "[sdk][probe-cache][root]") {
  if (::geteuid() != 0) {
    WARN("skipped: giving a file away takes root");
    return;
  }
  Scratch s;
  auto cache = open_cache(s.state());
  cache.store(sample_facts());
  REQUIRE(::chown(cache.file().c_str(), 65534, 65534) == 0);
  CHECK_FALSE(cache.load());
  REQUIRE(::chown(cache.file().c_str(), 0, 0) == 0);
  CHECK(cache.load());
  REQUIRE(::chown(s.state().c_str(), 65534, 65534) == 0);
  CHECK_FALSE(cache.load());
  cache.store(sample_facts());  // neither used nor taken back
  struct stat st {};
  REQUIRE(::stat(s.state().c_str(), &st) == 0);
  CHECK(st.st_uid == 65534);
}

TEST_CASE("sdk probe_cache: nothing is read or written through a symlink", "[sdk][probe-cache]") {
  Scratch s;
  auto cache = open_cache(s.state());
  cache.store(sample_facts());
  REQUIRE(cache.load());
  // The state directory reached through a symlinked level.
  fs::create_directory_symlink(s.base, s.base.string() + "-link");
  auto linked = open_cache(fs::path(s.base.string() + "-link") / "backend");
  CHECK_FALSE(linked.load());
  linked.store(sample_facts(), Clock::now() - 1s);
  auto again = cache.load();
  REQUIRE(again);
  CHECK(again->proven_at > Clock::now() - 1s);  // the real entry was not replaced
  fs::remove(s.base.string() + "-link");
  // The entry's file itself a symlink to a valid entry.
  fs::path real = s.state() / "elsewhere.json";
  fs::rename(cache.file(), real);
  fs::create_symlink(real, cache.file());
  CHECK_FALSE(cache.load());
}

TEST_CASE("sdk probe_cache: a shared directory is never used nor re-permitted",
          "[sdk][probe-cache]") {
  auto before = mode_of("/tmp");
  REQUIRE((before & 01777) == 01777);
  auto cache = open_cache("/tmp", {.name = "cordon-probe-cache-test"});
  cache.store(sample_facts());
  CHECK_FALSE(fs::exists(cache.file()));
  CHECK(mode_of("/tmp") == before);
}

TEST_CASE("sdk probe_cache: a run that failed to set up drops the entry, any other does not",
          "[sdk][probe-cache]") {
  Scratch s;
  auto cache = open_cache(s.state());
  cache.store(sample_facts());
  RunResult ran;
  ran.exit_code = 1;
  cache.drop_after_failed_setup(ran);
  RunResult not_found;
  not_found.error = Error(code::kNotFound, "no such program");
  cache.drop_after_failed_setup(not_found);
  CHECK(cache.load());
  RunResult failed;
  failed.error = Error(code::kIsolationFailed, "user namespace: cannot write uid_map");
  cache.drop_after_failed_setup(failed);
  CHECK_FALSE(fs::exists(cache.file()));
}

TEST_CASE("sdk probe_cache: CORDON_PROBE_CACHE=off or no state directory disables it",
          "[sdk][probe-cache]") {
  CHECK_FALSE(ProbeCache::open("", {.code = kCode}));
  {
    ScopedEnv off("CORDON_PROBE_CACHE", "off");
    CHECK_FALSE(ProbeCache::open("/nonexistent-state", {.code = kCode}));
  }
  CHECK(ProbeCache::open("/nonexistent-state", {.code = kCode}));
  CHECK_THROWS_AS(ProbeCache::open("/nonexistent-state", {}), std::invalid_argument);
  for (const char* name : {"", ".", "..", "a/b"})
    CHECK_THROWS_AS(ProbeCache::open("/nonexistent-state", {.code = kCode, .name = name}),
                    std::invalid_argument);
}

TEST_CASE("sdk probe_cache: storing removes stale entries of its prefixes, and only those",
          "[sdk][probe-cache]") {
  Scratch s;
  auto cache = open_cache(s.state(), {.prune_prefixes = {"applets-"}});
  cache.store(sample_facts());
  auto put = [&](const std::string& name, std::chrono::seconds age) {
    fs::path p = s.state() / name;
    REQUIRE(cordon::testing::write_aged_file(p, age));
    return p;
  };
  auto stale = std::chrono::duration_cast<std::chrono::seconds>(sdk::kProbeCacheStaleAfter) + 60s;
  auto old_probe = put("probe-0000000000000000.json", stale);
  auto old_applets = put("applets-0000000000000000", stale);
  auto recent = put("probe-1111111111111111.json", 60s);
  auto other = put("not-ours", stale);
  cache.store(sample_facts());
  CHECK_FALSE(fs::exists(old_probe));
  CHECK_FALSE(fs::exists(old_applets));
  CHECK(fs::exists(recent));
  CHECK(fs::exists(other));
  CHECK(fs::exists(cache.file()));
}

TEST_CASE("sdk probe_cache: cgroup support round-trips as JSON, a mistyped one is refused",
          "[sdk][probe-cache]") {
  sdk::CgroupSupport c;
  c.version = sdk::CgroupVersion::v1;
  c.memory = c.pids = true;
  c.memory_dir = "/sys/fs/cgroup/memory/x";
  c.pids_dir = "/sys/fs/cgroup/pids/x";
  c.evidence = "cgroup v1";
  auto back = sdk::cgroup_support_from_json(sdk::cgroup_support_json(c));
  REQUIRE(back);
  CHECK(back->version == c.version);
  CHECK(back->memory);
  CHECK_FALSE(back->cpu);
  CHECK(back->pids_dir == c.pids_dir);
  CHECK(back->evidence == c.evidence);
  auto bad = sdk::cgroup_support_json(c);
  bad["version"] = 7;
  CHECK_FALSE(sdk::cgroup_support_from_json(bad));
  bad = sdk::cgroup_support_json(c);
  bad["memory"] = "yes";
  CHECK_FALSE(sdk::cgroup_support_from_json(bad));
  CHECK_FALSE(sdk::cgroup_support_from_json(json::array{}));
}

TEST_CASE(
    "sdk probe_cache: cached cgroup directories are believed only where discovery finds "
    "them now",
    "[sdk][probe-cache]") {
  Scratch s;
  CHECK(sdk::cgroup_dirs_current({}));  // none: nothing to use
  sdk::CgroupSupport v1;
  v1.version = sdk::CgroupVersion::v1;
  v1.memory = true;
  v1.memory_dir = s.base.string();
  CHECK_FALSE(sdk::cgroup_dirs_current(v1));
  sdk::CgroupSupport v2;
  v2.version = sdk::CgroupVersion::v2;
  v2.memory = v2.pids = v2.cpu = true;
  v2.v2_dir = (s.base / "cordon").string();
  CHECK_FALSE(sdk::cgroup_dirs_current(v2));
  v2.v2_dir = "/sys/fs/cgroup/../../tmp/cordon";
  CHECK_FALSE(sdk::cgroup_dirs_current(v2));
  // The allowed twin: where discovery puts v1 memory groups on this host, when it has them.
  auto here = v1_memory_dir();
  if (!here) {
    WARN("the allowed twin skipped: no cgroup v1 memory hierarchy here");
    return;
  }
  v1.memory_dir = *here;
  CHECK(sdk::cgroup_dirs_current(v1));
  v1.memory_dir += "/..";
  CHECK_FALSE(sdk::cgroup_dirs_current(v1));
}
