// cordon's own state and the policy's own files stay out of every command's reach: '~' in a
// blocked path covers the home of the user the command runs as, cordon's state behind a
// symlinked directory or granted with its home stays masked, a root cordon keeps the state of
// the user its command runs as, and a command can neither rewrite the policy it runs under nor
// swap a link the policy is named through.
#include <pwd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <set>

#include "cordon_run.hpp"
#include "probes.hpp"

using namespace escape;
using Catch::Matchers::Contains;

namespace {

// The user a root cordon runs the command as, when it has a home directory; else nullptr.
passwd* sandbox_user_with_home() {
  passwd* pw = ::getpwuid(sandbox_uid());
  return pw && pw->pw_dir && std::filesystem::is_directory(pw->pw_dir) ? pw : nullptr;
}

}  // namespace

// Skips the test (fails it under CI=true) unless cordon runs as root, whose commands run as
// another user, and that user has a home; sets `pw` to that user.
#define REQUIRE_ROOT_AND_SANDBOX_HOME(pw)                                                     \
  ESCAPE_REQUIRE_ENV(running_as_root(), "only root's cordon runs a command as another user"); \
  (pw) = sandbox_user_with_home();                                                            \
  ESCAPE_REQUIRE_ENV((pw), "the sandbox's user has no home (scripts/test-user makes one)")

TEST_CASE("escape: as root, '~' in blocked paths covers the home of the user the command runs as",
          "[escape][userns][fs][blocked][trust][root]") {
  passwd* pw = nullptr;
  REQUIRE_ROOT_AND_SANDBOX_HOME(pw);
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
  passwd* pw = nullptr;
  REQUIRE_ROOT_AND_SANDBOX_HOME(pw);
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
