// Nothing a sandbox writes may weaken a later run: blocked paths masked on the object they were
// resolved to (a concurrent writer swapping a directory for a symlink gets a refusal, never the
// secret), their directories pinned where the command could rename them, the workspace never
// reached through a planted link, other mounts of a blocked object masked, and a multi-call
// binary that provides a blocked command masked with it. (trust_state_test.cpp: cordon's own
// state and the policy's files.)
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
