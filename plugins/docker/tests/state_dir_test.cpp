// cordon's docker state is its own: the state directory is verified at every level (a directory
// another user made is refused, never reused), and what cordon runs from it (the waiter, every
// container's pid 1) is checked by SHA-256 against the copy built into cordon before every use,
// never by size. The attacker is the unprivileged test user; cordon runs as root.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <cordon/sdk/private_dir.hpp>

#include "error_code.hpp"
#include "support.hpp"
#include "verified_file.hpp"
#include "waiter_blob.hpp"

using namespace cordon;
using namespace cordon::docker;
using namespace cordon::docker::test;

namespace fs = std::filesystem;

namespace {

std::string waiter_name() { return "docker-waiter-" + sha256_hex(waiter_program()).substr(0, 16); }

// A script of exactly the waiter's size that, run as a container's pid 1, leaves `marker`.
std::string impostor(const std::string& marker) {
  std::string script = "#!/bin/sh\ntouch " + marker + "\nexec cat\n#";
  script.resize(waiter_program().size(), '#');
  return script;
}

Error refusal_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e;
  }
  FAIL("no refusal");
  return Error(code::kBackendFault, "unreachable");
}

RunResult run_with_state(const std::string& state, const TempDir& ws, const std::string& script) {
  DockerBackend b(BackendContext{"docker", nullptr, state});
  CaptureSink sink;
  auto r = b.run(
      make_plan(base_policy(ws.path().string()), ws.path().string(), {"/bin/sh", "-c", script}),
      sink);
  INFO(sink.err);
  return r;
}

}  // namespace

TEST_CASE("state dir: a directory another user made is refused, never reused", "[unit][state]") {
  auto user = attacker();
  if (!user) return;
  OwnDir base;
  // The attacker owns a level on the way (as with /var/tmp/cordon-<euid> made in advance)...
  cordon::testing::TempDir theirs("cordon-dk-theirs-", user->uid, "/var/tmp");
  auto above = refusal_of([&] { PrivateDir::create(theirs / "docker"); });
  CHECK(above.code() == "CRD1006");
  CHECK(above.message().starts_with("'" + theirs.path().string() + "' is owned by uid " +
                                    std::to_string(user->uid)));
  CHECK_FALSE(fs::exists(theirs / "docker"));  // nothing was made under it
  // ... or made the directory itself, in a place cordon owns that others may write to.
  fs::create_directory(base / "open");
  ::chmod((base / "open").c_str(), 01777);
  REQUIRE(as_attacker(*user, [&] { return ::mkdir((base / "open/docker").c_str(), 0700); }) == 0);
  auto planted = refusal_of([&] { PrivateDir::create(base / "open/docker"); });
  CHECK(planted.code() == "CRD1006");
  CHECK(planted.message().starts_with("'" + (base / "open/docker") + "' is owned by uid " +
                                      std::to_string(user->uid)));
  // Both ways: the same path made by cordon itself is used, mode 0700.
  fs::create_directory(base / "mine");
  CHECK_NOTHROW(PrivateDir::create(base / "mine/docker"));
  struct stat st {};
  REQUIRE(::lstat((base / "mine/docker").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0700);
}

TEST_CASE("state dir: a waiter planted in another user's directory never runs", "[docker][state]") {
  if (!docker_ready()) return;
  auto user = attacker();
  if (!user) return;
  TempDir ws;
  std::string marker = ws / "impostor-ran";
  // The attacker makes the directory root would use and plants a script of the waiter's size
  // under the waiter's name.
  cordon::testing::TempDir theirs("cordon-dk-theirs-", user->uid, "/var/tmp");
  std::string state = theirs / "docker";
  REQUIRE(as_attacker(*user, [&] {
            if (::mkdir(state.c_str(), 0755) != 0) return 1;
            std::ofstream out(state + "/" + waiter_name());
            out << impostor(marker);
            out.close();
            return ::chmod((state + "/" + waiter_name()).c_str(), 0555) == 0 ? 0 : 2;
          }) == 0);
  auto r = run_with_state(state, ws, "echo ran > " + (ws / "command-ran"));
  REQUIRE(r.error);
  CHECK(r.error->code() == "CRD1006");
  CHECK(r.error->message().starts_with("'" + theirs.path().string() + "' is owned by uid " +
                                       std::to_string(user->uid)));
  CHECK_FALSE(fs::exists(marker));
  CHECK_FALSE(fs::exists(ws / "command-ran"));
  // Both ways: with a state directory of its own, the run works.
  OwnDir own;
  auto ok = run_with_state(own / "docker", ws, "echo ran > " + (ws / "command-ran"));
  CHECK_FALSE(ok.error);
  CHECK(ok.exit_code == 0);
  CHECK(read_file(ws / "command-ran") == "ran\n");
  CHECK_FALSE(fs::exists(marker));
}

TEST_CASE("state dir: the waiter is checked by content before every use, not by size",
          "[docker][state]") {
  if (!docker_ready()) return;
  TempDir ws;
  OwnDir own;
  std::string state = own / "docker";
  REQUIRE(run_with_state(state, ws, "true").exit_code == 0);
  std::string copy = state + "/" + waiter_name();
  REQUIRE(read_file(copy) == waiter_program());
  // Changed in place after the last run, same size and mode: the next run replaces it first.
  std::string marker = ws / "impostor-ran";
  ::chmod(copy.c_str(), 0755);
  {
    std::ofstream out(copy, std::ios::trunc);
    out << impostor(marker);
  }
  ::chmod(copy.c_str(), 0555);
  REQUIRE(fs::file_size(copy) == waiter_program().size());
  auto r = run_with_state(state, ws, "echo ran");
  CHECK_FALSE(r.error);
  CHECK(r.exit_code == 0);
  CHECK_FALSE(fs::exists(marker));
  CHECK(read_file(copy) == waiter_program());
  struct stat st {};
  REQUIRE(::stat(copy.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0555);
  HeldFd fd(::open(copy.c_str(), O_RDONLY | O_CLOEXEC));
  CHECK(sha256_of_fd(fd.fd()) == sha256_hex(waiter_program()));
}

TEST_CASE("state dir: without one from the context, root's is /run/cordon/backends/docker",
          "[docker][state]") {
  if (!docker_ready()) return;
  if (::geteuid() != 0) return;
  TempDir ws;
  DockerBackend b(BackendContext{"docker", nullptr, ""});
  CaptureSink sink;
  auto r = b.run(make_plan(base_policy(ws.path().string()), ws.path().string(), {"true"}), sink);
  CHECK_FALSE(r.error);
  struct stat st {};
  REQUIRE(::lstat("/run/cordon/backends/docker", &st) == 0);
  CHECK(S_ISDIR(st.st_mode));
  CHECK(st.st_uid == 0);
  CHECK((st.st_mode & 022) == 0);
  CHECK(read_file("/run/cordon/backends/docker/" + waiter_name()) == waiter_program());
}
