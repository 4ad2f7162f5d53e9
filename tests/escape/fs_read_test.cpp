// Reads outside filesystem.read, and every indirect way to them: `..`, symlinks, hard links,
// /proc/<pid>/root, O_PATH descriptors reopened through /proc/self/fd, inherited descriptors.
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "cordon_run.hpp"
#include "host.hpp"
#include "probes.hpp"

using namespace escape;
using Catch::Matchers::Contains;

TEST_CASE("escape: reads outside filesystem.read fail, listed reads work",
          "[escape][userns][fs][read][docker]") {
  Scratch s;
  auto ran = run_probe(s, confined(s.root()), "fsop",
                       {"read", s.listed() + "/ok.txt", "list", s.listed(), "read",
                        s.unlisted() + "/secret.txt", "list", s.unlisted(), "list", s.root()});
  INFO(ran.describe());
  CHECK_THAT(ran.line("read " + s.listed() + "/ok.txt"), Contains(kListedContent));
  CHECK_THAT(ran.line("list " + s.listed()), Contains("ok.txt"));
  CHECK_THAT(ran.line("read " + s.unlisted() + "/secret.txt"), IsErr(kReadDenied));
  CHECK_THAT(ran.line("list " + s.unlisted()), IsErr(kReadDenied));
  // The workspace's parent is not listed: the host's entries there must not show. (A sandbox
  // may show a skeleton holding only the granted paths.)
  CHECK_THAT(ran.line("list " + s.root()),
             IsErr(kReadDenied) || (!Contains("unlisted") && !Contains("policies")));
  CHECK_THAT(ran.out(), !Contains(kSecretContent));
}

TEST_CASE("escape: `..` from the workspace does not lead to unlisted files",
          "[escape][userns][fs][read][docker]") {
  Scratch s;
  // The command runs in the workspace, so relative `..` paths start there.
  auto ran = run_probe(s, confined(s.root()), "fsop",
                       {"read", "../listed/ok.txt", "read", "../unlisted/secret.txt", "read",
                        s.ws() + "/../unlisted/secret.txt", "read",
                        "../../../../../.." + s.unlisted() + "/secret.txt"});
  INFO(ran.describe());
  CHECK_THAT(ran.line("read ../listed/ok.txt"), Contains(kListedContent));
  CHECK_THAT(ran.line("read ../unlisted/secret.txt"), IsErr(kReadDenied));
  CHECK_THAT(ran.line("read " + s.ws() + "/../unlisted/secret.txt"), IsErr(kReadDenied));
  CHECK_THAT(ran.line("read ../../../../../.." + s.unlisted() + "/secret.txt"), IsErr(kReadDenied));
  CHECK_THAT(ran.out(), !Contains(kSecretContent));
}

TEST_CASE("escape: symlinks planted in the workspace do not open unlisted files",
          "[escape][userns][fs][read][symlink][docker]") {
  Scratch s;
  REQUIRE(symlink((s.unlisted() + "/secret.txt").c_str(), (s.ws() + "/to-secret").c_str()) == 0);
  REQUIRE(symlink(s.unlisted().c_str(), (s.ws() + "/to-unlisted-dir").c_str()) == 0);
  REQUIRE(symlink((s.listed() + "/ok.txt").c_str(), (s.ws() + "/to-listed").c_str()) == 0);
  auto ran = run_probe(s, confined(s.root()), "fsop",
                       {"read", "to-listed", "read", "to-secret", "list", "to-unlisted-dir", "read",
                        "to-unlisted-dir/secret.txt"});
  INFO(ran.describe());
  CHECK_THAT(ran.line("read to-listed"), Contains(kListedContent));
  CHECK_THAT(ran.line("read to-secret"), IsErr(kReadDenied));
  CHECK_THAT(ran.line("list to-unlisted-dir"), IsErr(kReadDenied));
  CHECK_THAT(ran.line("read to-unlisted-dir/secret.txt"), IsErr(kReadDenied));
  CHECK_THAT(ran.out(), !Contains(kSecretContent));
}

TEST_CASE("escape: symlinks made inside the sandbox do not open unlisted files",
          "[escape][userns][fs][read][symlink][docker]") {
  Scratch s;
  auto ran = run_probe(
      s, confined(s.root()), "fsop",
      {"symlink", s.unlisted() + "/secret.txt", "made-secret", "symlink", s.listed() + "/ok.txt",
       "made-listed", "read", "made-listed", "read", "made-secret"});
  INFO(ran.describe());
  // Making a symlink in the workspace is a write the policy grants; following it is the test.
  CHECK_THAT(ran.line("symlink " + s.unlisted() + "/secret.txt"), IsOk());
  CHECK_THAT(ran.line("read made-listed"), Contains(kListedContent));
  CHECK_THAT(ran.line("read made-secret"), IsErr(kReadDenied));
  CHECK_THAT(ran.out(), !Contains(kSecretContent));
}

TEST_CASE("escape: hard links made inside the sandbox cannot reach unlisted or blocked files",
          "[escape][userns][fs][read][hardlink][docker]") {
  Scratch s;
  s.write(s.ws() + "/mine.txt", "mine");
  s.give_to_sandbox(s.ws() + "/mine.txt");
  s.write(s.listed() + "/blocked.txt", kSecretContent);
  auto policy = confined(s.root());
  policy.blocked = std::vector<std::string>{s.listed() + "/blocked.txt"};
  auto ran = run_probe(
      s, policy, "fsop",
      {"link", "mine.txt", "mine-link.txt", "read", "mine-link.txt", "link",
       s.unlisted() + "/secret.txt", "secret-link.txt", "link", s.listed() + "/blocked.txt",
       "blocked-link.txt", "read", "secret-link.txt", "read", "blocked-link.txt"});
  INFO(ran.describe());
  CHECK_THAT(ran.line("link mine.txt"), IsOk());
  CHECK_THAT(ran.line("read mine-link.txt"), Contains("mine"));
  CHECK_THAT(ran.line("link " + s.unlisted() + "/secret.txt"), IsErr(kLinkDenied));
  CHECK_THAT(ran.line("link " + s.listed() + "/blocked.txt"), IsErr(kLinkDenied));
  CHECK_THAT(ran.line("read secret-link.txt"), IsErr({"ENOENT"}));
  CHECK_THAT(ran.line("read blocked-link.txt"), IsErr({"ENOENT"}));
  CHECK_FALSE(exists(s.ws() + "/secret-link.txt"));
  CHECK_FALSE(exists(s.ws() + "/blocked-link.txt"));
}

TEST_CASE("escape: /proc/self/root does not bypass read confinement",
          "[escape][userns][fs][read][proc][docker]") {
  Scratch s;
  auto ran = run_probe(s, confined(s.root()), "fsop",
                       {"read", "/proc/self/root" + s.listed() + "/ok.txt", "read",
                        "/proc/self/root" + s.unlisted() + "/secret.txt", "read",
                        "/proc/1/root" + s.unlisted() + "/secret.txt"});
  INFO(ran.describe());
  CHECK_THAT(ran.line("read /proc/self/root" + s.listed() + "/ok.txt"), Contains(kListedContent));
  CHECK_THAT(ran.line("read /proc/self/root" + s.unlisted() + "/secret.txt"), IsErr(kReadDenied));
  CHECK_THAT(ran.line("read /proc/1/root" + s.unlisted() + "/secret.txt"), IsErr(kReadDenied));
  CHECK_THAT(ran.out(), !Contains(kSecretContent));
}

TEST_CASE("escape: /proc/<host pid>/ gives nothing of a host process",
          "[escape][userns][fs][read][proc][docker]") {
  Scratch s;
  HostSleeper host(unique_marker("cordon-escape-procroot"));
  std::string dir = "/proc/" + std::to_string(host.pid());
  auto ran = run_probe(s, confined(s.root()), "fsop",
                       {"read", dir + "/root" + s.unlisted() + "/secret.txt", "read",
                        dir + "/environ", "read", dir + "/cmdline", "read", "/proc/self/cmdline"});
  INFO(ran.describe());
  // The sandbox's own /proc entries work; the host pid does not exist in its pid namespace.
  CHECK_THAT(ran.line("read /proc/self/cmdline"), Contains("fsop"));
  CHECK_THAT(ran.line("read " + dir + "/root" + s.unlisted() + "/secret.txt"), IsErr(kReadDenied));
  CHECK_THAT(ran.line("read " + dir + "/environ"), IsErr(kReadDenied));
  CHECK_THAT(ran.line("read " + dir + "/cmdline"), IsErr(kReadDenied));
  CHECK(host.alive());
}

TEST_CASE("escape: an O_PATH descriptor reopened through /proc/self/fd stays confined",
          "[escape][userns][fs][read][proc][docker]") {
  Scratch s;
  auto ran = run_probe(s, confined(s.root()), "fsop",
                       {"opath", s.listed() + "/ok.txt", "opath", s.unlisted() + "/secret.txt"});
  INFO(ran.describe());
  CHECK_THAT(ran.line("opath " + s.listed() + "/ok.txt"), Contains(kListedContent));
  CHECK_THAT(ran.line("opath " + s.unlisted() + "/secret.txt"), IsErr(kReadDenied));
  CHECK_THAT(ran.out(), !Contains(kSecretContent));
}

TEST_CASE("escape: descriptors cordon's caller holds do not reach the command",
          "[escape][userns][fs][read][fd][docker]") {
  Scratch s;
  // A caller's descriptor on an unlisted file, deliberately not close-on-exec.
  int raw = open((s.unlisted() + "/secret.txt").c_str(), O_RDONLY);
  REQUIRE(raw >= 0);
  int fd = fcntl(raw, F_DUPFD, 37);
  close(raw);
  REQUIRE(fd >= 37);
  RunExtras extras;
  extras.inherit_fds = {fd};
  auto ran = run_probe(
      s, confined(s.root()), "fsop",
      {"fds", "readfd", "0", "readfd", std::to_string(fd), "procfd", std::to_string(fd)}, extras);
  close(fd);
  INFO(ran.describe());
  CHECK(ran.line("fds") == "OK [0,1,2,]");
  CHECK(ran.line("readfd 0") == "OK 0 bytes: ");  // stdin is /dev/null
  CHECK_THAT(ran.line("readfd " + std::to_string(fd)), IsErr({"EBADF"}));
  CHECK_THAT(ran.line("procfd " + std::to_string(fd)), IsErr({"ENOENT"}));
  CHECK_THAT(ran.out(), !Contains(kSecretContent));
}
