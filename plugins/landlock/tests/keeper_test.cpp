// The keeper's ways of starting (its own program, a fork of cordon, or on cordon's memory, which
// the front end's integration test covers) and the shelf of keepers started ahead: each gives a
// keeper that makes its namespaces and can be joined, and nothing of them is left once they are
// discarded.
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <utility>
#include <vector>

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

// The program a process runs, by its argv[0] (readable whatever the process's dumpable flag).
std::string program_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return all.substr(0, all.find('\0'));
}

// Two runs of the kind without a network namespace, each over: the shelf then has one ready.
bool warmed(KeeperShelf& shelf) {
  for (int i = 0; i < 2; ++i) {
    if (shelf.take(false, nullptr)) return false;  // nothing is ready before the second is over
    shelf.done(false);
  }
  return eventually([&] { return shelf.ready_pid(false) != 0; });
}

// The ids of this process's threads.
std::vector<std::string> thread_ids() {
  std::vector<std::string> out;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task"))
    out.push_back(task.path().filename().string());
  return out;
}

// How often thread `tid` of this process has gone to sleep.
long sleeps_of(const std::string& tid) {
  std::ifstream in("/proc/self/task/" + tid + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("voluntary_ctxt_switches:", 0) == 0) return std::stol(line.substr(24));
  return -1;
}

const char* name_of(KeeperStart how) {
  return how == KeeperStart::exec ? "exec" : how == KeeperStart::fork ? "fork" : "shared";
}

bool runs_keeper_program(const Keeper& k) { return program_of(k.pid) == "cordon-landlock-keeper"; }

// From here on, execveat fails with EPERM in this process and its children (as where a
// security module or a container's filter refuses executing a memfd).
bool refuse_execveat() {
  sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_execveat, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog prog{static_cast<unsigned short>(std::size(code)), code};
  return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
         ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

// The exit status of `path` executed in a child; 100 + errno when it cannot be.
int exec_status(const std::string& path) {
  pid_t pid = ::fork();
  if (pid == 0) {
    char* argv[] = {const_cast<char*>(path.c_str()), nullptr};
    char* envp[] = {nullptr};
    ::execve(path.c_str(), argv, envp);
    ::_exit(100 + errno);
  }
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
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
  // `shared` is the front end's way; this test program, a dynamic executable, cannot give a
  // keeper its memory safely (its errno is the C library's): the keeper is forked instead.
  for (auto how : {KeeperStart::exec, KeeperStart::fork, KeeperStart::shared}) {
    for (bool network : {false, true}) {
      INFO(name_of(how) << ", network namespace " << network);
      Keeper k = start_keeper(network, how);
      REQUIRE(k);
      auto failed = await_keeper(k);
      INFO((failed ? std::string(failed->detail) : std::string()));
      REQUIRE_FALSE(failed);
      CHECK(k.ns_count == (network ? 6 : 5));
      // Executed, the keeper runs its own program, not a copy of this one.
      CHECK(runs_keeper_program(k) == (how == KeeperStart::exec));
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

TEST_CASE("keeper: started either way, it keeps none of cordon's descriptors", "[userns][keeper]") {
  if (!sandbox_available()) return;
  TempDir dir;
  std::string script = dir / "script";
  for (auto how : {KeeperStart::exec, KeeperStart::fork, KeeperStart::shared}) {
    INFO(name_of(how));
    // Another thread of cordon is writing a program (no close-on-exec) when a keeper starts.
    int writing = ::open(script.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0755);
    REQUIRE(writing >= 0);
    REQUIRE(::write(writing, "#!/bin/sh\nexit 7\n", 18) == 18);
    Keeper k = start_keeper(false, how);
    REQUIRE(k);
    REQUIRE_FALSE(await_keeper(k));
    ::close(writing);
    // Written and closed, it can be executed while the keeper waits for its run.
    CHECK(exec_status(script) == 7);
    discard_keeper(k);
  }
}

TEST_CASE("keeper: where its program cannot be executed, the keeper is forked, and works",
          "[userns][keeper]") {
  if (!sandbox_available()) return;
  // In a child process: the fallback, once taken, holds for the rest of the process.
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    if (!refuse_execveat()) ::_exit(10);
    for (int i = 0; i < 2; ++i) {  // the second start does not try the program again
      Keeper k = start_keeper(true, KeeperStart::exec);
      if (!k) ::_exit(11);
      if (await_keeper(k)) ::_exit(12);
      if (k.ns_count != 6) ::_exit(13);
      if (runs_keeper_program(k)) ::_exit(14);
      pid_t pid = k.pid;
      discard_keeper(k);
      if (exists(pid)) ::_exit(15);
    }
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  // 10: no filter; 11, 12: no keeper; 13: its namespaces; 14: not a fork; 15: left alive.
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("keeper shelf: a kind asked for once warms nothing, from the second on one is ready",
          "[userns][keeper]") {
  if (!sandbox_available()) return;
  pid_t held = 0;
  {
    KeeperShelf shelf;
    CHECK_FALSE(shelf.take(true, nullptr));
    shelf.done(true);
    std::this_thread::sleep_for(300ms);
    CHECK(shelf.ready_pid(true) == 0);  // asked once: nothing started ahead
    CHECK_FALSE(shelf.take(true, nullptr));
    shelf.done(true);
    REQUIRE(eventually([&] { return shelf.ready_pid(true) != 0; }));
    Keeper k = shelf.take(true, nullptr);
    REQUIRE(k);
    CHECK(k.network);
    CHECK_FALSE(await_keeper(k));  // already awaited: ready to be joined
    CHECK(exists(k.pid));
    // The run that took one is over: another is started; the other kind stays cold.
    shelf.done(true);
    REQUIRE(eventually([&] { return shelf.ready_pid(true) != 0; }));
    CHECK(shelf.ready_pid(true) != k.pid);
    CHECK_FALSE(shelf.take(false, nullptr));
    shelf.done(false);
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

TEST_CASE("keeper shelf: a run's take leaves the shelf's thread asleep, its end wakes it",
          "[userns][keeper]") {
  if (!sandbox_available()) return;
  const auto before = thread_ids();
  KeeperShelf shelf;
  REQUIRE(warmed(shelf));
  std::string tid;
  for (const auto& id : thread_ids())
    if (std::find(before.begin(), before.end(), id) == before.end()) tid = id;
  REQUIRE_FALSE(tid.empty());
  // Settled: asleep until a run of a kind is over.
  long sleeps = sleeps_of(tid);
  REQUIRE(eventually([&] {
    std::this_thread::sleep_for(20ms);
    return std::exchange(sleeps, sleeps_of(tid)) == sleeps;
  }));
  Keeper k = shelf.take(false, nullptr);
  REQUIRE(k);
  std::this_thread::sleep_for(100ms);
  CHECK(sleeps_of(tid) == sleeps);
  discard_keeper(k);
  shelf.done(false);
  REQUIRE(eventually([&] { return shelf.ready_pid(false) != 0; }));
  CHECK(sleeps_of(tid) > sleeps);
}

TEST_CASE("keeper shelf: a keeper that died while ready is not handed out", "[userns][keeper]") {
  if (!sandbox_available()) return;
  KeeperShelf shelf;
  REQUIRE(warmed(shelf));
  pid_t dead = shelf.ready_pid(false);
  REQUIRE(::kill(dead, SIGKILL) == 0);
  std::this_thread::sleep_for(100ms);
  Keeper k = shelf.take(false, nullptr);
  CHECK_FALSE(k);  // discarded (and reaped): the run starts its own
  CHECK_FALSE(exists(dead));
  shelf.done(false);
  REQUIRE(eventually([&] { return shelf.ready_pid(false) != 0; }));
  k = shelf.take(false, nullptr);
  REQUIRE(k);
  CHECK(exists(k.pid));
  discard_keeper(k);
}

TEST_CASE("keeper shelf: the next keeper is started once the run that took one is over",
          "[userns][keeper]") {
  if (!sandbox_available()) return;
  KeeperShelf shelf;
  REQUIRE(warmed(shelf));
  Keeper k = shelf.take(false, nullptr);
  REQUIRE(k);
  // While the run that took it goes on, nothing is prepared beside its command.
  std::this_thread::sleep_for(300ms);
  CHECK_FALSE(shelf.preparing(false));
  CHECK(shelf.ready_pid(false) == 0);
  discard_keeper(k);
  shelf.done(false);
  REQUIRE(eventually([&] { return shelf.ready_pid(false) != 0; }));
  // A run that comes while one is being prepared waits for that one instead of going without.
  // (Preparing takes milliseconds, the poll a tenth of one: caught at the latest in a few tries.)
  bool caught = false;
  for (int attempt = 0; attempt < 20 && !caught; ++attempt) {
    k = shelf.take(false, nullptr);
    discard_keeper(k);
    shelf.done(false);
    for (int i = 0; i < 50000 && !caught && shelf.ready_pid(false) == 0; ++i) {
      caught = shelf.preparing(false);
      if (!caught) std::this_thread::sleep_for(100us);
    }
  }
  REQUIRE(caught);
  k = shelf.take(false, nullptr);
  CHECK(k);
  CHECK_FALSE(shelf.preparing(false));
  discard_keeper(k);
}

TEST_CASE("keeper shelf: a fork of the process never waits on the parent's shelf", "[keeper]") {
  // A thread takes and releases the shelf's lock all the time, so that some forks happen while
  // it is held; the child's copy of a held lock is never released.
  KeeperShelf shelf;
  std::atomic<bool> stop{false};
  std::thread busy([&] {
    while (!stop) (void)shelf.ready_pid(false);
  });
  int stuck = 0;
  for (int i = 0; i < 200 && stuck == 0; ++i) {
    pid_t child = ::fork();
    if (child == 0) {
      // What a run in the child asks of the shelf: none of it may block.
      bool warm = shelf.warm(false);
      Keeper k = shelf.take(false, nullptr);
      shelf.done(false);
      ::_exit(!warm && !k ? 0 : 1);
    }
    int status = -1;
    for (int tries = 0; tries < 400 && ::waitpid(child, &status, WNOHANG) == 0; ++tries)
      std::this_thread::sleep_for(5ms);
    if (status == -1) {  // still there after 2 s: blocked
      ::kill(child, SIGKILL);
      ::waitpid(child, nullptr, 0);
      ++stuck;
    } else {
      CHECK(WIFEXITED(status));
      CHECK(WEXITSTATUS(status) == 0);
    }
  }
  stop = true;
  busy.join();
  CHECK(stuck == 0);
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
