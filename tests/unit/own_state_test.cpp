// Tests of cordon's own state in a run: every state directory is handed to the backend as
// protected, and the missing ones are made (privately) before the command runs.
#include <sys/stat.h>
#include <unistd.h>
#include <catch2/catch.hpp>
#include <cordon/config.hpp>
#include <cordon/jobs.hpp>
#include <cordon/policy_loader.hpp>
#include <cordon/runner.hpp>
#include <cordon/user_db.hpp>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#include "own_state.hpp"
#include "runtime_test_support.hpp"

using namespace cordon;
using cordon::test::Collect;
using cordon::test::fixture_dir;
using cordon::test::isolated;
namespace fs = std::filesystem;

namespace {

// A home of its own in a scratch directory, with the XDG variables unset; all restored after.
struct ScratchHome {
  fs::path base;
  std::map<std::string, std::optional<std::string>> saved;
  ScratchHome() {
    char tmpl[] = "/tmp/cordon-own-XXXXXX";
    base = ::mkdtemp(tmpl);
    fs::create_directories(base / "home");
    for (const char* name :
         {"HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR", "XDG_CACHE_HOME"}) {
      const char* v = std::getenv(name);
      saved[name] = v ? std::optional<std::string>(v) : std::nullopt;
      ::unsetenv(name);
    }
    ::setenv("HOME", (base / "home").c_str(), 1);
  }
  ~ScratchHome() {
    for (const auto& [name, value] : saved)
      value ? ::setenv(name.c_str(), value->c_str(), 1) : ::unsetenv(name.c_str());
    std::error_code ec;
    fs::remove_all(base, ec);
  }
};

// The paths the fixture backend was given, from its "protected:" line.
std::set<fs::path> protected_of(const std::string& out) {
  std::set<fs::path> paths;
  auto at = out.find("protected:");
  if (at == std::string::npos) return paths;
  std::istringstream line(out.substr(at + 10, out.find('\n', at) - at - 10));
  for (std::string p; line >> p;) paths.insert(p);
  return paths;
}

mode_t mode_of(const fs::path& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 ? st.st_mode & (S_IFMT | 07777) : 0;
}

RunOutcome run_fixture(const ScratchHome& h, std::vector<fs::path> extra, Collect& out) {
  auto ro = isolated({fixture_dir("good")});
  ro.state_dir = h.base / "run" / "cordon" / "backends";
  Registry r(ro);
  Invocation inv;
  inv.policy = load_preset("standard");
  inv.argv = {"x"};
  inv.workspace = "/tmp";
  inv.backend = "good";
  inv.host_home = h.base / "home";
  inv.protected_paths = std::move(extra);
  return run_invocation(r, inv, out);
}

}  // namespace

TEST_CASE("own state: a run protects cordon's directories and makes the missing ones first",
          "[own_state][plugin]") {
  ScratchHome h;
  Collect out;
  auto o = run_fixture(h, {h.base / "elsewhere" / "jobs", h.base / "my-config.toml"}, out);
  REQUIRE_FALSE(o.result.error);
  fs::path home = h.base / "home";
  auto prot = protected_of(out.out);
  for (const auto& p : {home / ".local" / "state" / "cordon", h.base / "run" / "cordon",
                        home / ".config" / "cordon", fixture_dir("good").lexically_normal(),
                        h.base / "elsewhere" / "jobs", h.base / "my-config.toml"})
    CHECK(prot.count(p) == 1);
  // Beside them only the default locations of another environment (the next test case).
  std::set<fs::path> defaults;
  for (const auto& r : state_roots(state_env())) defaults.insert(r.dir);
  for (const auto& p : prot)
    if (!p.string().starts_with(h.base.string()) && p != fixture_dir("good").lexically_normal())
      CHECK(defaults.count(p) == 1);
  // Made before the run, so that no command can make them first for a later cordon to trust.
  CHECK(mode_of(home / ".local" / "state" / "cordon" / "jobs") == (S_IFDIR | 0700));
  CHECK(mode_of(h.base / "run" / "cordon" / "backends") == (S_IFDIR | 0700));
  CHECK(mode_of(home / ".config" / "cordon") == (S_IFDIR | 0700));
  for (const auto& note : o.result.notes)
    CHECK(note.find("could not be prepared") == std::string::npos);
}

TEST_CASE("own state: a state directory another user prepared is protected, never adopted",
          "[own_state][plugin][root]") {
  if (::geteuid() != 0) {
    WARN("skipped: only root can give a directory to another user");
    return;
  }
  ScratchHome h;
  fs::path local = h.base / "home" / ".local";
  fs::create_directories(local);
  REQUIRE(::chown(local.c_str(), 65534, 65534) == 0);
  Collect out;
  auto o = run_fixture(h, {}, out);
  REQUIRE_FALSE(o.result.error);  // the run goes ahead, the directory kept from the command
  CHECK(protected_of(out.out).count(local / "state" / "cordon") == 1);
  CHECK_FALSE(fs::exists(local / "state"));
  bool noted = false;
  for (const auto& note : o.result.notes)
    noted |= note.find("CRD1006") != std::string::npos &&
             note.find("'" + local.string() + "' is owned by uid 65534") != std::string::npos;
  CHECK(noted);
}

TEST_CASE("own state: without HOME and XDG_STATE_HOME, no job is kept in a shared directory",
          "[own_state]") {
  ScratchHome h;
  ::unsetenv("HOME");
  fs::path dir = default_job_state_dir();
  if (::geteuid() == 0)
    CHECK(dir == "/var/lib/cordon/jobs");
  else
    CHECK(dir.string().ends_with("/.local/state/cordon/jobs"));  // the password database's home
  CHECK_FALSE(dir.string().starts_with("/tmp"));
  ::setenv("XDG_STATE_HOME", "relative/state", 1);
  CHECK(default_job_state_dir() == dir);
  ::setenv("XDG_STATE_HOME", "/srv/state", 1);
  CHECK(default_job_state_dir() == "/srv/state/cordon/jobs");
  ::unsetenv("XDG_STATE_HOME");
  ::setenv("HOME", (h.base / "home").c_str(), 1);
  CHECK(default_job_state_dir() == h.base / "home" / ".local" / "state" / "cordon" / "jobs");
}

TEST_CASE("own state: a home that does not exist is never made", "[own_state][plugin]") {
  ScratchHome h;
  fs::path ghost = h.base / "ghost-home";
  ::setenv("HOME", ghost.c_str(), 1);
  Collect out;
  auto o = run_fixture(h, {}, out);
  REQUIRE_FALSE(o.result.error);
  CHECK_FALSE(fs::exists(ghost));
  // Still kept from the command, should it make them.
  CHECK(protected_of(out.out).count(ghost / ".local" / "state" / "cordon") == 1);
  CHECK(protected_of(out.out).count(ghost / ".config" / "cordon") == 1);
}

TEST_CASE("own state: every default location of this user's state is listed, whatever is set",
          "[own_state]") {
  auto dirs = [](const std::vector<StateRoot>& roots) {
    std::set<fs::path> out;
    for (const auto& r : roots) out.insert(r.dir);
    return out;
  };
  StateEnv user{1000, "/home/u", "/x/state", "/x/cache", "/x/config", "/run/user/1000", "/home/u"};
  CHECK(dirs(state_roots(user)) ==
        std::set<fs::path>{"/x/state/cordon", "/home/u/.local/state/cordon",
                           "/run/user/1000/cordon", "/x/cache/cordon", "/home/u/.cache/cordon",
                           "/x/config/cordon", "/home/u/.config/cordon"});
  // A HOME other than the user database's: both homes' directories, each made in its own home.
  StateEnv moved{1000, "/srv/h/", {}, {}, {}, {}, "/home/u"};
  auto roots = state_roots(moved);
  CHECK(dirs(roots) == std::set<fs::path>{"/srv/h/.local/state/cordon",
                                          "/home/u/.local/state/cordon", "/run/user/1000/cordon",
                                          "/srv/h/.cache/cordon", "/home/u/.cache/cordon",
                                          "/srv/h/.config/cordon", "/home/u/.config/cordon"});
  for (const auto& r : roots)
    CHECK((r.base == "/srv/h" || r.base == "/home/u" || r.base == "/run/user/1000"));
  // Root: /var/lib and /run, never a home's cache; "/" is no home, and nothing is made in it.
  StateEnv root{0, "/", {}, {}, {}, {}, "/root"};
  CHECK(dirs(state_roots(root)) == std::set<fs::path>{"/root/.local/state/cordon",
                                                      "/var/lib/cordon", "/run/cordon",
                                                      "/root/.config/cordon"});
  StateEnv bare{1000, {}, {}, {}, {}, {}, {}};
  CHECK(dirs(state_roots(bare)) == std::set<fs::path>{"/run/user/1000/cordon"});
}

TEST_CASE("own state: the default locations a run does not use are made and protected too",
          "[own_state][plugin]") {
  ScratchHome h;
  fs::path xdg = h.base / "xdg", home = h.base / "home";
  fs::create_directories(xdg);
  for (const char* name : {"XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"})
    ::setenv(name, xdg.c_str(), 1);
  Collect out;
  auto o = run_fixture(h, {}, out);
  REQUIRE_FALSE(o.result.error);
  auto prot = protected_of(out.out);
  // In use: the XDG ones. Not in use, but where a cordon without these variables looks.
  for (const auto& dir :
       {xdg / "cordon", home / ".local" / "state" / "cordon", home / ".config" / "cordon"}) {
    CHECK(prot.count(dir) == 1);
    CHECK(mode_of(dir) == (S_IFDIR | 0700));
  }
  if (::geteuid() != 0) {
    CHECK(prot.count(home / ".cache" / "cordon") == 1);
    CHECK(mode_of(home / ".cache" / "cordon") == (S_IFDIR | 0700));
  }
  // A relative value is no location: nothing is made for it.
  ::setenv("XDG_CONFIG_HOME", "rel", 1);
  Collect again;
  REQUIRE_FALSE(run_fixture(h, {}, again).result.error);
  for (const auto& p : protected_of(again.out)) CHECK(p.is_absolute());
}

TEST_CASE("own state: a base spelled with '..' or under /proc is no location, for readers and runs",
          "[own_state]") {
  ScratchHome h;
  fs::path home = h.base / "home";
  // "link/.." is the link target's parent to the kernel, the link's own parent to a lexical
  // reading: what cordon reads and what it protects could differ, so neither takes it.
  ::setenv("XDG_CONFIG_HOME", (h.base / "lnk" / "..").c_str(), 1);
  ::setenv("XDG_STATE_HOME", "/srv/../srv/state", 1);
  CHECK(env_dir("XDG_CONFIG_HOME").empty());
  CHECK(default_config_path() == home / ".config" / "cordon" / "config.toml");
  CHECK(default_job_state_dir() == home / ".local" / "state" / "cordon" / "jobs");
  for (const auto& r : state_roots(state_env()))
    CHECK(r.dir.string().find("..") == std::string::npos);
  // /proc/self/cwd names another directory in every process.
  ::setenv("HOME", "/proc/self/cwd", 1);
  ::setenv("XDG_CACHE_HOME", "/proc/1/root/tmp", 1);
  CHECK(env_dir("HOME").empty());
  CHECK(env_dir("XDG_CACHE_HOME").empty());
  CHECK_FALSE(default_job_state_dir().string().starts_with("/proc"));
  CHECK_FALSE(default_config_path().string().starts_with("/proc"));
  for (const auto& r : state_roots(state_env())) CHECK_FALSE(r.dir.string().starts_with("/proc"));
  // Nor through a symlink, however many.
  fs::create_directories(h.base / "links");
  fs::create_symlink("/proc/self/cwd", h.base / "links" / "cwd");
  fs::create_symlink(h.base / "links" / "cwd", h.base / "links" / "chain");
  fs::create_symlink("../../../../../../../../../proc/1/root", h.base / "links" / "up");
  for (const char* link : {"cwd", "chain", "up"}) {
    ::setenv("HOME", (h.base / "links" / link).c_str(), 1);
    INFO(link);
    CHECK(env_dir("HOME").empty());
  }
  // A symlink elsewhere is followed as the kernel follows it: taken.
  fs::create_symlink(home, h.base / "links" / "home");
  ::setenv("HOME", (h.base / "links" / "home").c_str(), 1);
  CHECK(env_dir("HOME") == h.base / "links" / "home");
  // A plain absolute value is taken as it is.
  ::setenv("HOME", home.c_str(), 1);
  ::setenv("XDG_CONFIG_HOME", (h.base / "cfg").c_str(), 1);
  CHECK(env_dir("HOME") == home);
  CHECK(default_config_path() == h.base / "cfg" / "cordon" / "config.toml");
}

TEST_CASE("own state: another user's default state is listed for a command run as them",
          "[own_state]") {
  CHECK(command_user_state(::geteuid()).empty());
  auto theirs = command_user_state(::geteuid() == 0 ? 65534 : 0);
  CHECK_FALSE(theirs.empty());
  for (const auto& dir : theirs) CHECK(dir.filename() == "cordon");
  // What a run keeps already is not added twice; the rest is, each once.
  const uid_t other = ::geteuid() == 0 ? 65534 : 0;
  std::vector<fs::path> kept{theirs.front(), "/elsewhere/cordon"};
  auto more = command_user_state_beyond(other, kept);
  CHECK(more.size() == theirs.size() - 1);
  CHECK(std::find(more.begin(), more.end(), theirs.front()) == more.end());
  CHECK(command_user_state_beyond(other, theirs).empty());
  CHECK(command_user_state_beyond(::geteuid(), {}).empty());
}

TEST_CASE("own state: every account's entry is read from passwd text", "[own_state]") {
  auto users = passwd_entries(
      "root:x:0:0:root:/root:/bin/sh\nbad line\nu:x:1000:1000::/home/u:/bin/sh\n"
      "v:x:notanumber:1::/home/v:/bin/sh\nw:x:1001:1001::/srv/w:/bin/sh");
  REQUIRE(users.size() == 3);
  CHECK(users[0].name == "root");
  CHECK(users[1].home == "/home/u");
  CHECK(users[2].uid == 1001);
  CHECK(passwd_entries("").empty());
}

TEST_CASE("own state: the homes inside a directory give their users' state", "[own_state]") {
  // /etc/passwd's own accounts: the state of each one whose home lies in the directory.
  for (const auto& user : local_users()) {
    if (user.uid == ::geteuid() || user.home.size() < 2 || user.home.front() != '/') continue;
    fs::path home(user.home);
    auto dirs = users_state_within(home.parent_path());
    CHECK(std::count(dirs.begin(), dirs.end(), home / ".config" / "cordon") == 1);
    auto none = users_state_within("/nonexistent-cordon-dir");
    CHECK(none.empty());
    return;
  }
  WARN("skipped: no other account in /etc/passwd");
}
