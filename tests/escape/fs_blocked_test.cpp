// filesystem.blocked: paths that stay unreadable, unlistable and unexecutable even inside a listed
// directory and even with read = "host" — which Landlock's allow-list alone cannot express.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "cordon_run.hpp"
#include "probes.hpp"

using namespace escape;
using Catch::Matchers::Contains;

namespace {

/// listed/ gains a blocked directory (with a secret and a program) and a blocked file, next to
/// an ordinary program; returns the policy that blocks both.
PolicySpec with_blocked(Scratch& s, PolicySpec policy) {
  s.write(s.listed() + "/blocked-dir/secret.txt", kSecretContent);
  s.write(s.listed() + "/blocked.txt", kSecretContent);
  std::filesystem::copy_file(true_program(), s.listed() + "/blocked-dir/tool");
  std::filesystem::copy_file(true_program(), s.listed() + "/tool");
  chmod((s.listed() + "/blocked-dir/tool").c_str(), 0755);
  chmod((s.listed() + "/tool").c_str(), 0755);
  policy.blocked =
      std::vector<std::string>{s.listed() + "/blocked-dir", s.listed() + "/blocked.txt"};
  return policy;
}

/// Reads, lists and O_PATH-reopens the blocked paths and one allowed file; checks every answer.
void check_blocked_reads(Scratch& s, const PolicySpec& policy) {
  auto ran = run_probe(s, policy, "fsop",
                       {"read", s.listed() + "/ok.txt", "read", s.listed() + "/blocked.txt", "list",
                        s.listed() + "/blocked-dir", "read", s.listed() + "/blocked-dir/secret.txt",
                        "opath", s.listed() + "/blocked.txt", "read", "../listed/blocked.txt"});
  INFO(ran.describe());
  CHECK_THAT(ran.line("read " + s.listed() + "/ok.txt"), Contains(kListedContent));
  CHECK_THAT(ran.line("read " + s.listed() + "/blocked.txt"), IsErr(kReadDenied));
  CHECK_THAT(ran.line("list " + s.listed() + "/blocked-dir"), IsErr(kReadDenied));
  CHECK_THAT(ran.line("read " + s.listed() + "/blocked-dir/secret.txt"), IsErr(kReadDenied));
  CHECK_THAT(ran.line("opath " + s.listed() + "/blocked.txt"), IsErr(kReadDenied));
  CHECK_THAT(ran.line("read ../listed/blocked.txt"), IsErr(kReadDenied));
  CHECK_THAT(ran.out(), !Contains(kSecretContent));
}

/// Executes the program inside the blocked directory and the one beside it.
void check_blocked_exec(Scratch& s, const PolicySpec& policy) {
  auto denied = run_probe(s, policy, "fsop", {"exec", s.listed() + "/blocked-dir/tool"});
  INFO(denied.describe());
  CHECK_THAT(denied.line("exec " + s.listed() + "/blocked-dir/tool"), IsErr(kReadDenied));
  auto allowed = run_probe(s, policy, "fsop", {"exec", s.listed() + "/tool"});
  INFO(allowed.describe());
  CHECK(allowed.status() == 0);
  CHECK(allowed.lines("exec " + s.listed() + "/tool").empty());
}

}  // namespace

TEST_CASE("escape: blocked paths inside a listed directory cannot be read or listed",
          "[escape][userns][fs][blocked][docker]") {
  Scratch s;
  check_blocked_reads(s, with_blocked(s, confined(s.root())));
}

TEST_CASE("escape: programs under a blocked path cannot be executed",
          "[escape][userns][fs][blocked][exec][docker]") {
  Scratch s;
  check_blocked_exec(s, with_blocked(s, confined(s.root())));
}

TEST_CASE("escape: blocked paths stay unreadable with read = \"host\"",
          "[escape][userns][fs][blocked][host][docker]") {
  Scratch s;
  auto policy = with_blocked(s, confined(s.root()));
  policy.read_host = true;
  check_blocked_reads(s, policy);
  // Docker never mounts the host's tree (read = "host" gives the image's root and the mounts):
  // there the allowed side is the listed read in check_blocked_reads.
  if (on_docker()) return;
  // read = "host" really reads the host: a directory no list names is readable.
  auto ran = run_probe(s, policy, "fsop", {"read", s.unlisted() + "/secret.txt"});
  INFO(ran.describe());
  CHECK_THAT(ran.line("read " + s.unlisted() + "/secret.txt"), Contains(kSecretContent));
}

TEST_CASE("escape: programs under a blocked path cannot be executed with read = \"host\"",
          "[escape][userns][fs][blocked][host][exec][docker]") {
  Scratch s;
  auto policy = with_blocked(s, confined(s.root()));
  policy.read_host = true;
  check_blocked_exec(s, policy);
}

TEST_CASE("escape: workspace symlinks and hard links do not reach blocked paths",
          "[escape][userns][fs][blocked][symlink][hardlink][docker]") {
  Scratch s;
  auto policy = with_blocked(s, confined(s.root()));
  policy.read_host = true;
  REQUIRE(symlink((s.listed() + "/blocked.txt").c_str(), (s.ws() + "/to-blocked").c_str()) == 0);
  REQUIRE(symlink((s.listed() + "/blocked-dir").c_str(), (s.ws() + "/to-blocked-dir").c_str()) ==
          0);
  REQUIRE(symlink((s.listed() + "/ok.txt").c_str(), (s.ws() + "/to-ok").c_str()) == 0);
  auto ran =
      run_probe(s, policy, "fsop",
                {"read", "to-ok", "read", "to-blocked", "list", "to-blocked-dir", "read",
                 "to-blocked-dir/secret.txt", "link", s.listed() + "/blocked.txt", "hard-blocked",
                 "read", "hard-blocked", "read", "/proc/self/root" + s.listed() + "/blocked.txt"});
  INFO(ran.describe());
  CHECK_THAT(ran.line("read to-ok"), Contains(kListedContent));
  CHECK_THAT(ran.line("read to-blocked"), IsErr(kReadDenied));
  CHECK_THAT(ran.line("list to-blocked-dir"), IsErr(kReadDenied));
  CHECK_THAT(ran.line("read to-blocked-dir/secret.txt"), IsErr(kReadDenied));
  CHECK_THAT(ran.line("link " + s.listed() + "/blocked.txt"), IsErr(kLinkDenied));
  CHECK_THAT(ran.line("read hard-blocked"), IsErr({"ENOENT"}));
  CHECK_THAT(ran.line("read /proc/self/root" + s.listed() + "/blocked.txt"), IsErr(kReadDenied));
  CHECK_THAT(ran.out(), !Contains(kSecretContent));
}
