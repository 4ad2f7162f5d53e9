// The keeper's two ways of starting (its own program, or a fork of cordon) and the shelf of
// keepers started ahead: each gives a keeper that makes its namespaces and can be joined, and
// nothing of them is left once they are discarded.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "keeper.hpp"
#include "keeper_exec.hpp"
#include "keeper_shelf.hpp"
#include "support.hpp"

using namespace cordon;
using namespace cordon::landlock;
using namespace cordon::landlock::test;
using namespace std::chrono_literals;

namespace {

// Alive or a zombie not reaped yet.
bool exists(pid_t pid) { return pid > 0 && ::kill(pid, 0) == 0; }

// Waits up to 20 s for `ready` to hold.
template <class F>
bool eventually(F ready) {
  for (int i = 0; i < 400; ++i) {
    if (ready()) return true;
    std::this_thread::sleep_for(50ms);
  }
  return ready();
}

}  // namespace

TEST_CASE("keeper: its own program is a static executable embedded in the backend", "[keeper]") {
  auto program = keeper_program();
  REQUIRE(program.size() > 4);
  CHECK(program.substr(0, 4) == std::string_view("\x7f"
                                                 "ELF",
                                                 4));
}

TEST_CASE("keeper: started either way, it makes its namespaces and dies when discarded",
          "[userns][keeper]") {
  if (!sandbox_available()) return;
  for (auto how : {KeeperStart::exec, KeeperStart::fork}) {
    for (bool network : {false, true}) {
      INFO((how == KeeperStart::exec ? "exec" : "fork") << ", network namespace " << network);
      Keeper k = start_keeper(network, how);
      REQUIRE(k);
      auto failed = await_keeper(k);
      INFO((failed ? std::string(failed->detail) : std::string()));
      REQUIRE_FALSE(failed);
      CHECK(k.ns_count == (network ? 6 : 5));
      // Its pid namespace is not cordon's.
      struct stat mine {
      }, its{};
      REQUIRE(::stat("/proc/self/ns/pid", &mine) == 0);
      REQUIRE(::fstat(k.ns[1].get(), &its) == 0);
      CHECK(mine.st_ino != its.st_ino);
      pid_t pid = k.pid;
      discard_keeper(k);
      CHECK_FALSE(k);
      CHECK_FALSE(exists(pid));
    }
  }
}

TEST_CASE("keeper shelf: a kind asked for once warms nothing, from the second on one is ready",
          "[userns][keeper]") {
  if (!sandbox_available()) return;
  pid_t held = 0;
  {
    KeeperShelf shelf;
    CHECK_FALSE(shelf.take(true, nullptr));
    std::this_thread::sleep_for(300ms);
    CHECK(shelf.ready_pid(true) == 0);  // asked once: nothing started ahead
    CHECK_FALSE(shelf.take(true, nullptr));
    REQUIRE(eventually([&] { return shelf.ready_pid(true) != 0; }));
    Keeper k = shelf.take(true, nullptr);
    REQUIRE(k);
    CHECK(k.network);
    CHECK_FALSE(await_keeper(k));  // already awaited: ready to be joined
    CHECK(exists(k.pid));
    // Taking one has another started; the other kind stays cold.
    REQUIRE(eventually([&] { return shelf.ready_pid(true) != 0; }));
    CHECK(shelf.ready_pid(true) != k.pid);
    CHECK_FALSE(shelf.take(false, nullptr));
    CHECK(shelf.ready_pid(false) == 0);
    pid_t pid = k.pid;
    discard_keeper(k);
    CHECK_FALSE(exists(pid));
    held = shelf.ready_pid(true);
    REQUIRE(exists(held));
  }
  // The shelf gone, the keeper it held is gone too, reaped.
  CHECK_FALSE(exists(held));
}

TEST_CASE("keeper shelf: a keeper that died while ready is not handed out", "[userns][keeper]") {
  if (!sandbox_available()) return;
  KeeperShelf shelf;
  CHECK_FALSE(shelf.take(false, nullptr));
  CHECK_FALSE(shelf.take(false, nullptr));
  REQUIRE(eventually([&] { return shelf.ready_pid(false) != 0; }));
  pid_t dead = shelf.ready_pid(false);
  REQUIRE(::kill(dead, SIGKILL) == 0);
  std::this_thread::sleep_for(100ms);
  Keeper k = shelf.take(false, nullptr);
  CHECK_FALSE(k);  // discarded (and reaped): the run starts its own
  CHECK_FALSE(exists(dead));
  REQUIRE(eventually([&] { return shelf.ready_pid(false) != 0; }));
  k = shelf.take(false, nullptr);
  REQUIRE(k);
  CHECK(exists(k.pid));
  discard_keeper(k);
}

TEST_CASE("keeper shelf: a tree prepared ahead serves only a run that plans the same tree",
          "[userns][keeper][fs]") {
  if (!sandbox_available()) return;
  TempDir ws, secrets("cordon-ll-secrets-", 65534, host_area());
  write_file(secrets / "token", "tok\n");
  write_file(secrets / "ok", "fine\n");
  if (is_root())
    for (auto f : {"token", "ok"}) (void)!::chown((secrets / f).c_str(), 65534, 65534);
  const std::string s = secrets.path().string();
  auto policy = base_policy(ws.path(), "");
  policy.filesystem.read_host = true;
  policy.filesystem.blocked = {s + "/token", s + "/later"};
  LandlockBackend local(BackendContext{"landlock", nullptr, {}});
  const std::string script = "for f in ok token later; do if cat " + s +
                             "/$f >/dev/null 2>&1; then echo yes; "
                             "else echo no; fi; done";
  auto attempt = [&] {
    CaptureSink sink;
    auto r = local.run(make_plan(policy, ws.path(), {"/bin/sh", "-c", script}), sink);
    return r.error ? "error: " + r.error->render() : sink.out;
  };
  // The third run on takes keepers prepared with this tree (the shelf warms from the second).
  for (int i = 0; i < 4; ++i) {
    INFO("run " << i);
    CHECK(attempt() == "yes\nno\nno\n");
    std::this_thread::sleep_for(100ms);  // time to prepare the next
  }
  // A blocked path made on the host since: the keeper ready with the old tree (no mask there)
  // must not serve; the run plans a new tree, and the path is masked.
  write_file(secrets / "later", "made later\n");
  if (is_root()) (void)!::chown((secrets / "later").c_str(), 65534, 65534);
  for (int i = 0; i < 3; ++i) {
    INFO("after the host changed, run " << i);
    CHECK(attempt() == "yes\nno\nno\n");
    std::this_thread::sleep_for(100ms);
  }
  // Unblocked by the policy, the same file reads: the masks are the plan's, not the shelf's.
  policy.filesystem.blocked = {s + "/token"};
  for (int i = 0; i < 3; ++i) {
    INFO("unblocked, run " << i);
    CHECK(attempt() == "yes\nno\nyes\n");
    std::this_thread::sleep_for(100ms);
  }
}
