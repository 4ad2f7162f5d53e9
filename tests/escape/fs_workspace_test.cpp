// The workspace is writable and its content untrusted (a cloned repository, an earlier run's
// output). A blocked path inside it must survive a command that can rename, unlink and link
// around it; and a grant that names a path inside it must not follow a planted symlink out.
#include <unistd.h>

#include <catch2/catch.hpp>

#include "cordon_run.hpp"
#include "probes.hpp"

using namespace escape;
using Catch::Matchers::Contains;

namespace {

/// What the kernel answers when a masked path is renamed, replaced or unlinked: a mount point
/// is busy (EBUSY); Landlock or a read-only mount refuse (EACCES, EPERM, EROFS, EXDEV).
const std::set<std::string> kMaskedDenied{"EBUSY", "EACCES", "EPERM", "EROFS", "EXDEV", "ENOENT"};

}  // namespace

TEST_CASE("escape: a blocked path inside the writable workspace cannot be read or displaced",
          "[escape][userns][fs][blocked][workspace][docker]") {
  Scratch s;
  s.write(s.ws() + "/.env", kSecretContent, 0600);
  s.write(s.ws() + "/vault/key.txt", kSecretContent, 0600);
  s.write(s.ws() + "/readme.txt", "readme\n");
  for (const char* p : {"/.env", "/vault", "/vault/key.txt", "/readme.txt"})
    s.give_to_sandbox(s.ws() + p);
  auto policy = confined(s.root());
  policy.blocked = std::vector<std::string>{"{workspace}/.env", "{workspace}/vault"};
  auto ran = run_probe(s, policy, "fsop", {"read",          "readme.txt",
                                           "rename",        "readme.txt",
                                           "renamed.txt",   "read",
                                           ".env",          "read",
                                           "vault/key.txt", "list",
                                           "vault",         "append",
                                           ".env",          "chmod",
                                           ".env",          "644",
                                           "link",          ".env",
                                           "env-link",      "read",
                                           "env-link",      "rename",
                                           "vault",         "vault-moved",
                                           "read",          "vault-moved/key.txt",
                                           "unlink",        ".env",
                                           "create",        "decoy",
                                           "rename",        "decoy",
                                           ".env",          "rmdir",
                                           "vault",         "opath",
                                           ".env"});
  INFO(ran.describe());
  CHECK_THAT(ran.line("read readme.txt"), Contains("readme"));
  CHECK_THAT(ran.line("rename readme.txt"), IsOk());
  CHECK_THAT(ran.line("read .env"), IsErr(kReadDenied));
  CHECK_THAT(ran.line("read vault/key.txt"), IsErr(kReadDenied));
  CHECK_THAT(ran.line("list vault"), IsErr(kReadDenied));
  CHECK_THAT(ran.line("append .env"), IsErr(kMaskedDenied));
  CHECK_THAT(ran.line("chmod .env"), IsErr(kMaskedDenied));
  CHECK_THAT(ran.line("link .env"), IsErr(kMaskedDenied));
  CHECK_THAT(ran.line("read env-link"), IsErr({"ENOENT"}));
  CHECK_THAT(ran.line("rename vault"), IsErr(kMaskedDenied));
  CHECK_THAT(ran.line("read vault-moved/key.txt"), IsErr({"ENOENT"}));
  CHECK_THAT(ran.line("unlink .env"), IsErr(kMaskedDenied));
  CHECK_THAT(ran.line("create decoy"), IsOk());
  CHECK_THAT(ran.line("rename decoy"), IsErr(kMaskedDenied));
  CHECK_THAT(ran.line("rmdir vault"), IsErr(kMaskedDenied));
  CHECK_THAT(ran.line("opath .env"), IsErr(kReadDenied));
  CHECK_THAT(ran.out(), !Contains(kSecretContent));
  // And on the host the secrets are where they were, untouched.
  CHECK(s.read(s.ws() + "/.env") == kSecretContent);
  CHECK(s.read(s.ws() + "/vault/key.txt") == kSecretContent);
  CHECK(file_mode(s.ws() + "/.env") == 0600);
}

TEST_CASE("escape: a write grant inside the workspace does not follow a planted symlink out",
          "[escape][userns][fs][write][symlink][workspace][docker]") {
  Scratch honest, planted;
  honest.mkdir(honest.ws() + "/out");
  honest.give_to_sandbox(honest.ws() + "/out");
  // The untrusted checkout made "out" a symlink to a directory the policy only lets it read.
  // That directory belongs to the sandbox's user, so that only the policy stands in the way.
  REQUIRE(symlink(planted.ro().c_str(), (planted.ws() + "/out").c_str()) == 0);
  planted.give_to_sandbox(planted.ro());
  for (Scratch* s : {&honest, &planted}) {
    auto policy = confined(s->root());
    policy.write = std::vector<std::string>{"{workspace}", "{workspace}/out"};
    auto ran = run_cordon(*s, policy, {probe("fsop"), "create", "out/made.txt"});
    INFO((s == &honest ? "honest" : "planted") << " workspace\n" << ran.describe());
    if (s == &honest) {
      require_ran(ran);
      CHECK_THAT(ran.line("create out/made.txt"), IsOk());
      CHECK(s->read(s->ws() + "/out/made.txt") == "planted\n");
    } else {
      // Refused before the run (a path escape) or denied in it; never written through.
      if (ran.json && ran.json->error) CHECK(ran.proc.status == 125);
      if (ran.json && !ran.json->error)
        CHECK_THAT(ran.line("create out/made.txt"), IsErr(kWriteDenied));
      CHECK_FALSE(exists(s->ro() + "/made.txt"));
    }
  }
}

TEST_CASE("escape: a read grant inside the workspace does not follow a planted symlink out",
          "[escape][userns][fs][read][symlink][workspace][docker]") {
  Scratch honest, planted;
  honest.write(honest.ws() + "/docs/guide.txt", kListedContent);
  REQUIRE(symlink(planted.unlisted().c_str(), (planted.ws() + "/docs").c_str()) == 0);
  for (Scratch* s : {&honest, &planted}) {
    auto policy = confined(s->root());
    policy.read->push_back("{workspace}/docs");
    bool is_honest = s == &honest;
    auto ran = run_cordon(
        *s, policy, {probe("fsop"), "read", is_honest ? "docs/guide.txt" : "docs/secret.txt"});
    INFO((is_honest ? "honest" : "planted") << " workspace\n" << ran.describe());
    if (is_honest) {
      require_ran(ran);
      CHECK_THAT(ran.line("read docs/guide.txt"), Contains(kListedContent));
    } else {
      if (ran.json && ran.json->error) CHECK(ran.proc.status == 125);
      if (ran.json && !ran.json->error)
        CHECK_THAT(ran.line("read docs/secret.txt"), IsErr(kReadDenied));
      CHECK_THAT(ran.proc.out, !Contains(kSecretContent));
    }
  }
}
