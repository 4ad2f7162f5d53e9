// Nothing a sandbox writes may weaken a later run: blocked paths masked on the object they were
// resolved to (a concurrent writer swapping a directory for a symlink gets a refusal, never the
// secret), their directories pinned where the command could rename them, the workspace never
// reached through a planted link, other mounts of a blocked object masked, and a multi-call
// binary that provides a blocked command masked with it, and the policy's own files kept from
// the command.
#include <pwd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <set>

#include "cordon_run.hpp"
#include "probes.hpp"

using namespace escape;
using Catch::Matchers::Contains;

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kRace{10500};

/// ws/conf/secret.key (the secret) and ws/conf/other.txt, ws/decoy/ (no secret) and
/// ws/conf.alt -> decoy: the two names a swapper exchanges. Returns the policy blocking the key.
PolicySpec with_conf(Scratch& s) {
  s.write(s.ws() + "/conf/secret.key", kSecretContent);
  s.write(s.ws() + "/conf/other.txt", kListedContent);
  s.mkdir(s.ws() + "/decoy");
  REQUIRE(::symlink("decoy", (s.ws() + "/conf.alt").c_str()) == 0);
  s.give_to_sandbox(s.ws());
  for (auto p : {"/conf", "/conf/secret.key", "/conf/other.txt", "/decoy", "/conf.alt"})
    s.give_to_sandbox(s.ws() + p);
  auto policy = confined(s.root());
  policy.blocked = std::vector<std::string>{"{workspace}/conf/secret.key"};
  return policy;
}

struct Tally {
  int ran = 0, refused = 0, leaked = 0;
  std::set<std::string> codes;
  std::string leak;
  std::string odd;  ///< a refusal with another code than the isolation's, in full
};

/// Runs `command` again and again for `how_long`, counting the runs whose output holds the
/// secret and the runs cordon refused.
Tally run_repeatedly(Scratch& s, const PolicySpec& policy, const std::vector<std::string>& command,
                     std::chrono::milliseconds how_long) {
  Tally t;
  for (auto end = Clock::now() + how_long; Clock::now() < end;) {
    Ran r = run_cordon(s, policy, command);
    if (r.out().find(kSecretContent) != std::string::npos) {
      ++t.leaked;
      t.leak = r.describe();
    }
    if (r.json && r.json->error) {
      ++t.refused;
      t.codes.insert(r.json->error->code);
      const auto& code = r.json->error->code;
      if (code != "CRD1003" && code != "CRD4004" && t.odd.empty()) t.odd = r.describe();
    } else {
      ++t.ran;
    }
  }
  return t;
}

}  // namespace

TEST_CASE("escape: a blocked path reads as blocked, and unblocked it reads (the race's twin)",
          "[escape][userns][fs][blocked][trust]") {
  Scratch s;
  auto policy = with_conf(s);
  auto ran = run_probe(s, policy, "raceop", {"read", "conf/secret.key", "50"});
  INFO(ran.describe());
  CHECK_THAT(ran.line("read conf/secret.key"), IsErr(kReadDenied));
  auto other = run_probe(s, policy, "raceop", {"read", "conf/other.txt", "50"});
  CHECK_THAT(other.line("read conf/other.txt"), Contains(kListedContent));
  policy.blocked = std::vector<std::string>{};
  auto open = run_probe(s, policy, "raceop", {"read", "conf/secret.key", "50"});
  CHECK_THAT(open.line("read conf/secret.key"), Contains(kSecretContent));
}

TEST_CASE("escape: a writer swapping a blocked path's directory for a symlink never exposes it",
          "[escape][userns][fs][blocked][trust][race]") {
  Scratch s;
  auto policy = with_conf(s);
  // The writer outside any sandbox, as the workspace's owner could be: the strongest form of
  // a concurrent sandbox whose policy grants the workspace.
  SpawnOptions swapper;
  swapper.argv = {probe("raceop"), "swap", s.ws() + "/conf", s.ws() + "/conf.alt",
                  std::to_string(kRace.count() + 1000)};
  Process writer(swapper);
  auto t = run_repeatedly(s, policy, {probe("raceop"), "read", "conf/secret.key", "20"}, kRace);
  Exit w = writer.wait();
  INFO("runs " << t.ran << ", refused " << t.refused << ", leaked " << t.leaked << "\n"
               << t.leak << "\nswapper: " << w.out << w.err << "\n"
               << t.odd);
  CHECK_THAT(w.out, Contains("swap " + s.ws() + "/conf: OK"));
  CHECK(t.leaked == 0);
  CHECK(t.ran + t.refused >= 20);
  // A refusal names the isolation that could not be bound, nothing else.
  for (const auto& code : t.codes) CHECK((code == "CRD1003" || code == "CRD4004"));
}

TEST_CASE("escape: a sandbox cannot rename or remove the directories of a blocked path",
          "[escape][userns][fs][blocked][trust]") {
  Scratch s;
  auto policy = with_conf(s);
  s.mkdir(s.ws() + "/free");
  s.give_to_sandbox(s.ws() + "/free");
  auto ran = run_probe(
      s, policy, "fsop",
      {"rename", "conf", "conf2", "rmdir", "conf", "rename", "conf/secret.key", "conf/moved",
       "rename", "conf/other.txt", "conf/other2.txt", "rename", "free", "free2"});
  INFO(ran.describe());
  CHECK_THAT(ran.line("rename conf"), IsErr({"EBUSY"}));
  CHECK_THAT(ran.line("rmdir conf"), IsErr({"EBUSY", "ENOTEMPTY"}));
  CHECK_THAT(ran.line("rename conf/secret.key"), IsErr({"EBUSY", "EXDEV"}));
  CHECK_THAT(ran.line("rename conf/other.txt"), IsOk());
  CHECK_THAT(ran.line("rename free"), IsOk());
  // The same swap from inside a sandbox of the policy fails at once.
  auto swap = run_probe(s, policy, "raceop", {"swap", "conf", "conf.alt", "200"});
  CHECK_THAT(swap.line("swap conf"), IsErr({"EBUSY"}));
  // So a later run finds the secret where the policy names it, and it stays blocked.
  CHECK(s.read(s.ws() + "/conf/secret.key") == kSecretContent);
  auto later = run_probe(s, policy, "raceop", {"read", "conf/secret.key", "20"});
  CHECK_THAT(later.line("read conf/secret.key"), IsErr(kReadDenied));
}

TEST_CASE("escape: the workspace is never reached through a planted symlink",
          "[escape][userns][fs][trust]") {
  Scratch s;
  s.mkdir(s.root() + "/elsewhere");
  s.give_to_sandbox(s.root() + "/elsewhere");
  // What a run in ws could leave behind for the next: ws/pkg -> a directory outside it.
  REQUIRE(::symlink((s.root() + "/elsewhere").c_str(), (s.ws() + "/pkg").c_str()) == 0);
  RunExtras planted;
  planted.with_workspace = false;
  planted.flags = {"--workspace", s.ws() + "/pkg"};
  auto refused = run_cordon(s, confined(s.root()),
                            {probe("fsop"), "create", "written-by-the-command"}, planted);
  INFO(refused.describe());
  CHECK(refused.error_code() == "CRD4004");
  REQUIRE(refused.json);
  CHECK_THAT(refused.json->error->message,
             Contains("'" + s.ws() + "/pkg' -> '" + s.root() + "/elsewhere'"));
  CHECK_FALSE(exists(s.root() + "/elsewhere/written-by-the-command"));
  // Named by its real path, the same directory is a workspace like any other.
  RunExtras direct;
  direct.with_workspace = false;
  direct.flags = {"--workspace", s.root() + "/elsewhere"};
  auto ran = run_cordon(s, confined(s.root()), {probe("fsop"), "create", "written"}, direct);
  INFO(ran.describe());
  require_ran(ran);
  CHECK(exists(s.root() + "/elsewhere/written"));
}

TEST_CASE("escape: another mount of a blocked directory is masked too",
          "[escape][userns][fs][blocked][trust][root]") {
  ESCAPE_REQUIRE_ENV(running_as_root(), "bind-mounting a host directory needs root");
  Scratch s;
  s.write(s.listed() + "/data/secret.txt", kSecretContent);
  s.write(s.listed() + "/data/ok.txt", kListedContent);
  s.mkdir(s.root() + "/alias");
  REQUIRE(::mount((s.listed() + "/data").c_str(), (s.root() + "/alias").c_str(), nullptr, MS_BIND,
                  nullptr) == 0);
  struct Unmount {
    std::string at;
    ~Unmount() { ::umount2(at.c_str(), MNT_DETACH); }
  } unmount{s.root() + "/alias"};
  auto policy = confined(s.root());
  policy.read_host = true;
  policy.blocked = std::vector<std::string>{s.listed() + "/data/secret.txt"};
  auto ran = run_probe(s, policy, "fsop",
                       {"read", s.root() + "/alias/secret.txt", "read", s.root() + "/alias/ok.txt",
                        "read", s.listed() + "/data/secret.txt"});
  INFO(ran.describe());
  CHECK_THAT(ran.line("read " + s.root() + "/alias/secret.txt"), IsErr(kReadDenied));
  CHECK_THAT(ran.line("read " + s.listed() + "/data/secret.txt"), IsErr(kReadDenied));
  CHECK_THAT(ran.line("read " + s.root() + "/alias/ok.txt"), Contains(kListedContent));
  CHECK_THAT(ran.out(), !Contains(kSecretContent));
}

TEST_CASE("escape: a busybox that provides a blocked command is masked with it",
          "[escape][userns][exec][trust]") {
  std::string busybox;
  for (const char* bb : {"/usr/bin/busybox", "/bin/busybox"})
    if (busybox.empty() && ::access(bb, X_OK) == 0) busybox = bb;
  ESCAPE_REQUIRE_ENV(!busybox.empty(), "no busybox on this host (apt-get install busybox-static)");
  Scratch s;
  auto policy = confined(s.root());
  policy.blocked_commands = std::vector<std::string>{"sudo", "su"};
  auto ran = run_probe(s, policy, "fsop", {"execwith", busybox, "true"});
  INFO(ran.describe());
  CHECK_THAT(ran.line("execwith " + busybox), IsErr({"EACCES"}));
  // Blocking only what busybox does not provide leaves it usable.
  policy.blocked_commands = std::vector<std::string>{"pkexec"};
  auto allowed = run_cordon(s, policy, {busybox, "true"});
  INFO(allowed.describe());
  require_ran(allowed);
  CHECK(allowed.status() == 0);
}

TEST_CASE("escape: as root, '~' in blocked paths covers the home of the user the command runs as",
          "[escape][userns][fs][blocked][trust][root]") {
  ESCAPE_REQUIRE_ENV(running_as_root(), "only root's cordon runs a command as another user");
  passwd* pw = ::getpwuid(sandbox_uid());
  ESCAPE_REQUIRE_ENV(pw != nullptr && pw->pw_dir && std::filesystem::is_directory(pw->pw_dir),
                     "the sandbox's user has no home directory (scripts/test-user makes one)");
  Scratch s;
  // A credentials directory in that user's home, as ~/.ssh would be (made here, removed after).
  std::string home = pw->pw_dir;
  std::string marker = unique_marker("cordon-escape-creds-");
  std::string creds = home + "/." + marker;
  s.write(creds + "/id_key", kSecretContent);
  s.write(creds + "/readable", kListedContent);
  struct Remove {
    std::string p;
    ~Remove() {
      std::error_code ec;
      std::filesystem::remove_all(p, ec);
    }
  } remove{creds};
  for (auto p : {creds, creds + "/id_key", creds + "/readable"}) s.give_to_sandbox(p);
  auto policy = confined(s.root());
  policy.read_host = true;
  policy.home = "host";
  policy.blocked = std::vector<std::string>{"~/." + marker + "/id_key"};
  auto ran = run_probe(s, policy, "fsop", {"read", creds + "/id_key", "read", creds + "/readable"});
  INFO(ran.describe());
  CHECK_THAT(ran.line("read " + creds + "/id_key"), IsErr(kReadDenied));
  CHECK_THAT(ran.line("read " + creds + "/readable"), Contains(kListedContent));
  REQUIRE(ran.json);
  bool said = false;
  for (const auto& n : ran.json->notes) said = said || n.find("apply to") != std::string::npos;
  CHECK(said);
  // explain shows the same expansion before anything runs.
  auto preview = explain_preview(s, policy);
  std::string line;
  for (const auto& l : preview)
    if (l.rfind("~/." + marker + "/id_key (blocked): ", 0) == 0) line = l;
  INFO("preview line: " << line);
  CHECK(line.find(" and " + creds + "/id_key") != std::string::npos);
}

TEST_CASE("escape: cordon's state behind a symlinked directory of the home stays out of reach",
          "[escape][userns][fs][trust]") {
  Scratch s;
  // A dotfiles home: ~/.config -> the workspace's config. A level cordon does not make through
  // a symlink, so the missing state there refuses the run, and existing state is masked.
  std::string home = s.root() + "/home", config = s.ws() + "/config";
  s.mkdir(home, 0700);
  s.mkdir(config);
  s.give_to_sandbox(config);
  REQUIRE(::symlink(config.c_str(), (home + "/.config").c_str()) == 0);
  RunExtras extras;
  extras.set_env = {{"HOME", home}, {"XDG_STATE_HOME", ""}, {"XDG_CONFIG_HOME", ""}};
  extras.unset_env = {"XDG_RUNTIME_DIR", "XDG_CACHE_HOME"};
  auto policy = confined(s.root());
  policy.read_host = true;
  auto refused = run_cordon(s, policy, {probe("fsop"), "mkdir", config + "/cordon"}, extras);
  INFO(refused.describe());
  CHECK(refused.error_code() == "CRD1003");
  CHECK_FALSE(exists(config + "/cordon"));
  // Made by its user (as cordon would have), it is kept from the command under its real name.
  s.mkdir(config + "/cordon", 0700);
  s.give_to_sandbox(config + "/cordon");
  auto ran =
      run_probe(s, policy, "fsop",
                {"create", config + "/cordon/config.toml", "create", config + "/mine"}, extras);
  INFO(ran.describe());
  CHECK_THAT(ran.line("create " + config + "/cordon/config.toml"), IsErr(kHiddenWriteDenied));
  CHECK_FALSE(exists(config + "/cordon/config.toml"));
  CHECK_THAT(ran.line("create " + config + "/mine"), IsOk());
}

TEST_CASE("escape: a root cordon keeps the state of the user its command runs as out of reach",
          "[escape][userns][fs][trust][root]") {
  ESCAPE_REQUIRE_ENV(running_as_root(), "only root's cordon runs a command as another user");
  passwd* pw = ::getpwuid(sandbox_uid());
  ESCAPE_REQUIRE_ENV(pw != nullptr && pw->pw_dir && std::filesystem::is_directory(pw->pw_dir),
                     "the sandbox's user has no home directory (scripts/test-user makes one)");
  Scratch s;
  // That user's own cordon state, as their first run makes it; their later cordon trusts it.
  const std::string home = pw->pw_dir;
  for (const char* dir : {"/.config", "/.config/cordon", "/.local", "/.local/state",
                          "/.local/state/cordon", "/.cache", "/.cache/cordon"}) {
    std::string p = home + dir;
    if (::mkdir(p.c_str(), 0700) == 0) REQUIRE(::chown(p.c_str(), pw->pw_uid, pw->pw_gid) == 0);
  }
  const std::string marker = unique_marker("cordon-escape-theirs-");
  const std::string config = home + "/.config/cordon/" + marker + ".toml",
                    cache = home + "/.cache/cordon/" + marker, ok = home + "/." + marker;
  struct Remove {
    std::vector<std::string> paths;
    ~Remove() {
      for (const auto& p : paths) ::unlink(p.c_str());
    }
  } remove{{config, cache, ok}};
  auto policy = confined(s.root());
  policy.read_host = true;
  policy.home = "host";
  policy.write = std::vector<std::string>{"{workspace}", "~"};
  auto ran = run_probe(
      s, policy, "fsop",
      {"create", config, "list", home + "/.local/state/cordon", "create", cache, "create", ok});
  INFO(ran.describe());
  CHECK_THAT(ran.line("create " + config), IsErr(kHiddenWriteDenied));
  CHECK_THAT(ran.line("list " + home + "/.local/state/cordon"), IsErr(kReadDenied));
  CHECK_THAT(ran.line("create " + cache), IsErr(kHiddenWriteDenied));
  CHECK_FALSE(exists(config));
  CHECK_FALSE(exists(cache));
  // The rest of their home, granted as '~', is the command's to write.
  CHECK_THAT(ran.line("create " + ok), IsOk());
}

TEST_CASE("escape: '~' stays cordon's home when the command has no other home, and explain says so",
          "[escape][userns][fs][blocked][trust]") {
  Scratch s;
  // As root a root-owned workspace runs the command as nobody (no home); unprivileged, the
  // command is cordon's own user: either way one home, cordon's, which the preview names alone.
  if (running_as_root()) REQUIRE(::chown(s.ws().c_str(), 0, 0) == 0);
  auto policy = confined(s.root());
  policy.read_host = true;
  policy.blocked = std::vector<std::string>{"~/.cordon-escape-none/id_key"};
  std::string line;
  for (const auto& l : explain_preview(s, policy))
    if (l.rfind("~/.cordon-escape-none/id_key (blocked): /", 0) == 0) line = l;
  INFO("preview line: " << line);
  CHECK_FALSE(line.empty());
  CHECK(line.find(" and ") == std::string::npos);
}

TEST_CASE("escape: cordon's own state is out of reach even where the policy grants its home",
          "[escape][userns][fs][trust]") {
  Scratch s;
  // cordon's HOME for this run: its job state, backend state (unprivileged) and configuration
  // directories go under it, and the policy grants all of it for writing.
  std::string home = s.root() + "/home";
  s.mkdir(home, 0700);
  s.mkdir(home + "/.config/other");
  s.write(home + "/.local/state/cordon/jobs/planted-earlier", kSecretContent);
  RunExtras extras;
  extras.set_env = {{"HOME", home}, {"XDG_STATE_HOME", ""}, {"XDG_CONFIG_HOME", ""}};
  extras.unset_env = {"XDG_RUNTIME_DIR", "XDG_CACHE_HOME"};
  auto policy = confined(s.root());
  policy.read_host = true;
  policy.write = std::vector<std::string>{"{workspace}", "~"};
  const std::string state = home + "/.local/state/cordon";
  auto ran =
      run_probe(s, policy, "fsop",
                {"list", state, "read", state + "/jobs/planted-earlier", "create",
                 state + "/jobs/forged", "create", home + "/.config/cordon/config.toml", "create",
                 home + "/.config/other/ok", "rename", home + "/.local", home + "/.local2"},
                extras);
  INFO(ran.describe());
  CHECK_THAT(ran.line("list " + state), IsErr(kReadDenied));
  CHECK_THAT(ran.line("read " + state + "/jobs/planted-earlier"), IsErr(kReadDenied));
  CHECK_THAT(ran.line("create " + state + "/jobs/forged"), IsErr(kHiddenWriteDenied));
  CHECK_THAT(ran.line("create " + home + "/.config/cordon/config.toml"), IsErr(kHiddenWriteDenied));
  // A directory above the masked state is pinned (as root the command, another user, cannot
  // enter this root-owned home at all).
  CHECK_THAT(ran.line("rename " + home + "/.local"),
             IsErr(running_as_root() ? std::set<std::string>{"EACCES", "EBUSY"}
                                     : std::set<std::string>{"EBUSY"}));
  CHECK_FALSE(exists(state + "/jobs/forged"));
  CHECK_FALSE(exists(home + "/.config/cordon/config.toml"));
  // The rest of the granted home is the command's to write (as root the command is another
  // user, whom this root-owned home does not let in).
  if (!running_as_root()) CHECK_THAT(ran.line("create " + home + "/.config/other/ok"), IsOk());
  REQUIRE(ran.json);
  bool reported = false;
  for (const auto& [cap, how] : ran.json->report)
    reported =
        reported || (cap == "fs.read.block" && how.find("cordon's own state") != std::string::npos);
  CHECK(reported);
}

TEST_CASE(
    "escape: the default state a later cordon would use is out of reach under other XDG paths",
    "[escape][userns][fs][trust]") {
  Scratch s;
  // This run keeps its state and configuration under XDG directories; a later cordon without
  // those variables (a cron job, a login shell) looks in the home instead.
  std::string home = s.root() + "/home", xdg = s.root() + "/xdg";
  s.mkdir(home, 0700);
  s.mkdir(home + "/.config/other");
  s.mkdir(xdg + "/other");
  s.write(home + "/.local/state/cordon/jobs/planted-earlier", kSecretContent);
  RunExtras extras;
  extras.set_env = {
      {"HOME", home}, {"XDG_STATE_HOME", xdg}, {"XDG_CONFIG_HOME", xdg}, {"XDG_CACHE_HOME", xdg}};
  extras.unset_env = {"XDG_RUNTIME_DIR"};
  auto policy = confined(s.root());
  policy.read_host = true;
  policy.write = std::vector<std::string>{"{workspace}", "~", xdg};
  const std::string state = home + "/.local/state/cordon";
  auto ran = run_probe(s, policy, "fsop", {"read",   state + "/jobs/planted-earlier",
                                           "create", state + "/jobs/forged",
                                           "mkdir",  home + "/.config/cordon",
                                           "create", home + "/.config/cordon/config.toml",
                                           "mkdir",  home + "/.cache",
                                           "mkdir",  home + "/.cache/cordon",
                                           "create", home + "/.cache/cordon/backends",
                                           "mkdir",  xdg + "/cordon",
                                           "create", xdg + "/cordon/config.toml",
                                           "create", home + "/.config/other/ok",
                                           "create", xdg + "/other/ok"},
                       extras);
  INFO(ran.describe());
  CHECK_THAT(ran.line("read " + state + "/jobs/planted-earlier"), IsErr(kReadDenied));
  CHECK_THAT(ran.line("create " + state + "/jobs/forged"), IsErr(kHiddenWriteDenied));
  CHECK_THAT(ran.line("create " + home + "/.config/cordon/config.toml"), IsErr(kHiddenWriteDenied));
  CHECK_THAT(ran.line("create " + xdg + "/cordon/config.toml"), IsErr(kHiddenWriteDenied));
  CHECK_FALSE(exists(home + "/.config/cordon/config.toml"));
  CHECK_FALSE(exists(xdg + "/cordon/config.toml"));
  CHECK_FALSE(exists(state + "/jobs/forged"));
  if (!running_as_root()) {
    // The cache is the backend state's default for a user (root's is /run/cordon).
    CHECK_THAT(ran.line("create " + home + "/.cache/cordon/backends"), IsErr(kHiddenWriteDenied));
    CHECK_FALSE(exists(home + "/.cache/cordon/backends"));
    // Next to them, the granted directories are the command's to write.
    CHECK_THAT(ran.line("create " + home + "/.config/other/ok"), IsOk());
    CHECK_THAT(ran.line("create " + xdg + "/other/ok"), IsOk());
  }
}

TEST_CASE("escape: a command cannot rewrite the policy file it runs under, nor one it extends",
          "[escape][userns][fs][write][docker]") {
  Scratch s;
  // Both files in the workspace, the sandbox's to write but for the policy's own protection.
  std::string base = s.ws() + "/base.toml", top = s.ws() + "/policy.toml";
  s.write(base, confined(s.root()).toml());
  PolicySpec extending;
  extending.name = "escape-extending";
  extending.extends = "./base.toml";
  s.write(top, extending.toml());
  s.write(s.ws() + "/mine.txt", "workspace-content\n");
  for (const auto& p : {base, top, s.ws() + "/mine.txt"}) s.give_to_sandbox(p);
  const std::string before_base = s.read(base), before_top = s.read(top);
  RunExtras extras;
  extras.with_policy = false;
  extras.flags = {"--policy", top};
  auto ran = run_probe(s, extending, "fsop",
                       {"append", "mine.txt", "append", "policy.toml", "append", "base.toml",
                        "otrunc", "policy.toml", "unlink", "base.toml"},
                       extras);
  INFO(ran.describe());
  CHECK_THAT(ran.line("append mine.txt"), IsOk());
  CHECK(s.read(s.ws() + "/mine.txt") == "workspace-content\nappended\n");
  for (const auto* tag :
       {"append policy.toml", "append base.toml", "otrunc policy.toml", "unlink base.toml"})
    CHECK_THAT(ran.line(tag), !IsOk());
  CHECK(s.read(top) == before_top);
  CHECK(s.read(base) == before_base);
}

TEST_CASE("escape: a command cannot move a blocked path away from where the policy names it",
          "[escape][userns][fs][write][docker]") {
  Scratch s;
  auto policy = with_conf(s);
  auto ran = run_probe(s, policy, "fsop",
                       {"rename", "conf", "conf.moved", "rename", "decoy", "decoy.moved"});
  INFO(ran.describe());
  CHECK_THAT(ran.line("rename decoy"), IsOk());  // a directory with nothing masked moves
  CHECK_THAT(ran.line("rename conf"), !IsOk());
  // A later run finds the secret where the policy names it, and masks it there.
  CHECK(s.read(s.ws() + "/conf/secret.key") == kSecretContent);
  CHECK_FALSE(std::filesystem::exists(s.ws() + "/conf.moved"));
}

TEST_CASE("escape: a policy named through a link the command could swap is refused",
          "[escape][userns][fs][write][docker]") {
  Scratch s;
  PolicySpec policy = confined(s.root());
  // The real file outside the workspace, and a link to it in the workspace, which the command
  // could replace with a policy of its own for the next run.
  std::string real = s.root() + "/policies/p.toml", link = s.ws() + "/policy.toml";
  s.write(real, policy.toml());
  REQUIRE(::symlink(real.c_str(), link.c_str()) == 0);
  s.give_to_sandbox(s.ws());
  std::vector<std::string> witness = {probe("fsop"), "create", s.ws() + "/ran.txt"};
  RunExtras extras;
  extras.with_policy = false;
  extras.flags = {"--policy", real};
  auto good = run_cordon(s, policy, witness, extras);
  require_ran(good);
  CHECK(std::filesystem::exists(s.ws() + "/ran.txt"));
  std::filesystem::remove(s.ws() + "/ran.txt");
  extras.flags = {"--policy", link};
  auto ran = run_cordon(s, policy, witness, extras);
  INFO(ran.describe());
  CHECK(ran.proc.status == 125);
  CHECK((ran.error_code() == "CRD1003" || ran.error_code() == "CRD4004"));
  // Refused on the host before anything starts, naming the link and what to do instead.
  std::string said = ran.describe();
  CHECK(said.find("passes through the symlink") != std::string::npos);
  CHECK(said.find("by their real paths") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(s.ws() + "/ran.txt"));
  CHECK(std::filesystem::is_symlink(link));
}
