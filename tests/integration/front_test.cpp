// `cordon` is a front end with landlock built in: it runs `cordon run` itself while that needs no
// plugin file and no YAML module, and hands every other command line, unchanged, to the full
// executable in <libexec>/cordon/cordon. Each case is run twice: with the full executable in
// place (the command line works) and with the front end copied alone (only what it runs itself
// works, and a hand-off is refused with CRD3014, never run some other way).
#include <fcntl.h>
#include <linux/kcmp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "cli.hpp"

namespace fs = std::filesystem;

namespace {

const char* kPolicy = "version = 1\n[filesystem]\nread = \"host\"\n[limits]\ntimeout = \"20s\"\n";

// kPolicy written into `s`: its path, or "" when landlock cannot run it here (the case is then
// skipped or, under CI=true, failed, by landlock_usable()).
std::string landlock_policy(const itest::Scratch& s) {
  std::ofstream(s / "p.toml") << kPolicy;
  std::string policy = (s / "p.toml").string();
  return itest::landlock_usable(policy) ? policy : std::string();
}

// The front end alone, as bin/cordon under `root`: no libexec/cordon/cordon beside it.
fs::path lone_front(const fs::path& root) {
  fs::create_directories(root / "bin");
  fs::copy_file(CORDON_CLI, root / "bin" / "cordon");
  return root / "bin" / "cordon";
}

escape::Exit run(const fs::path& program, std::vector<std::string> args,
                 std::map<std::string, std::string> env = {}) {
  escape::SpawnOptions o;
  o.argv = {program.string()};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.set_env = std::move(env);
  return escape::run_process(o);
}

// True when this runs as root; else says why the case is skipped.
bool as_root(const char* why) {
  if (::geteuid() == 0) return true;
  WARN("skipping: " << why);
  return false;
}

// The children of `pid` (its main thread's), as /proc lists them.
std::vector<pid_t> children_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  std::vector<pid_t> out;
  for (pid_t child; in >> child;) out.push_back(child);
  return out;
}

// The line of /proc/PID/status that starts with `key`, without the key.
std::string status_field(pid_t pid, const std::string& key) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key, 0) == 0) return line.substr(key.size());
  return {};
}

#if defined(__x86_64__)
constexpr bool kX86_64 = true;
#else
constexpr bool kX86_64 = false;
#endif

// 0 when the two processes share their memory (kcmp(2)), else 1, 2 or 3, or -1.
long same_memory(pid_t a, pid_t b) { return ::syscall(SYS_kcmp, a, b, KCMP_VM, 0, 0); }

bool handed_off(const escape::Exit& r) {
  return r.err.find("handing the command line to") != std::string::npos;
}

bool refused_hand_off(const escape::Exit& r, const fs::path& root) {
  return r.err.find("CRD3014") != std::string::npos &&
         r.err.find((root / "bin" / ".." / "libexec" / "cordon" / "cordon").string()) !=
             std::string::npos;
}

}  // namespace

TEST_CASE("front: run --backend landlock runs in the front end itself", "[front][cli]") {
  itest::Scratch s;
  std::string policy = landlock_policy(s);
  if (policy.empty()) return;
  std::vector<std::string> args = {"run",         "--backend",    "landlock", "--policy",  policy,
                                   "--workspace", s.dir.string(), "--",       "/bin/echo", "hi"};
  auto here = itest::run_cli(args, {{"CORDON_LOG", "debug"}});
  INFO(here.err);
  CHECK(here.status == 0);
  CHECK(here.out == "hi\n");
  CHECK_FALSE(handed_off(here));
  // Alone, with nothing to hand off to, the same run works: it never needed the full one.
  auto alone = run(lone_front(s / "alone"), args);
  INFO(alone.err);
  CHECK(alone.status == 0);
  CHECK(alone.out == "hi\n");
}

// The front end asks for its pages in advance at entry (front/entry.cpp), the stack a run grows
// into among them; under a stack limit smaller than that the kernel refuses, and the run goes on.
TEST_CASE("front: a stack limit that refuses the populate at entry does not stop a run",
          "[front][cli]") {
  // Only the static front end is entered there; a sanitizer build's needs far more stack.
  if (!CORDON_FRONT_STATIC) {
    WARN("skipping: the front end is not static here, and has no populate at entry");
    return;
  }
  itest::Scratch s;
  std::string policy = landlock_policy(s);
  if (policy.empty()) return;
  std::string script = "ulimit -s 100 && exec " + std::string(CORDON_CLI) +
                       " run --backend landlock --policy " + policy + " --workspace " +
                       s.dir.string() + " -- /bin/echo hi";
  auto r = run("/bin/sh", {"-c", script});
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.out == "hi\n");
}

// A program that ignores SIGCHLD passes that on through execve: the kernel would then reap the
// sandbox's processes before cordon could wait for them (a run hung, spinning, before). Both
// executables give SIGCHLD its default action back first, and report the command's status.
TEST_CASE("front: started with SIGCHLD ignored, cordon still reports how its command ended",
          "[front][cli]") {
  itest::Scratch s;
  std::string policy = landlock_policy(s);
  if (policy.empty()) return;
  for (const char* program : {CORDON_CLI, CORDON_FULL_CLI}) {
    INFO(program);
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::signal(SIGCHLD, SIG_IGN);
      int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, 1);
      ::dup2(null, 2);
      ::alarm(60);  // a hang ends as SIGALRM, not as a stuck test
      ::execl(program, program, "run", "--backend", "landlock", "--policy", policy.c_str(),
              "--workspace", s.dir.c_str(), "--", "/bin/sh", "-c", "sleep 0.2; exit 7",
              static_cast<char*>(nullptr));
      ::_exit(127);
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 7);
  }
}

TEST_CASE("front: every other verb is the full executable's", "[front][cli]") {
  itest::Scratch s;
  auto here = itest::run_cli({"version"});
  CHECK(here.status == 0);
  CHECK(here.out.rfind("cordon ", 0) == 0);
  auto front = lone_front(s / "alone");
  auto alone = run(front, {"version"});
  CHECK(alone.status == 2);
  CHECK(alone.out.empty());
  CHECK(refused_hand_off(alone, s / "alone"));
  auto job = run(front, {"job", "list"});
  CHECK(job.status == 125);
  CHECK(refused_hand_off(job, s / "alone"));
}

TEST_CASE("front: a plugin file is loaded by the full executable", "[front][cli]") {
  itest::Scratch s;
  std::string plugins = (fs::path(CORDON_TEST_PLUGINS) / "good").string();
  std::vector<std::string> args = {"run",         "--backend",    "good", "--plugin-dir", plugins,
                                   "--workspace", s.dir.string(), "--",   "/bin/true"};
  auto here = itest::run_cli(args, {{"CORDON_LOG", "debug"}});
  INFO(here.err);
  CHECK(here.status == 0);
  CHECK(here.out.find("argv: /bin/true") != std::string::npos);
  CHECK(handed_off(here));
  CHECK(here.err.find("cordon-backend-good.so") != std::string::npos);
  auto alone = run(lone_front(s / "alone"), args);
  INFO(alone.err);
  CHECK(alone.status == 125);
  CHECK(alone.out.empty());
  CHECK(refused_hand_off(alone, s / "alone"));
}

TEST_CASE("front: a plugin file named by --plugin-dir wins over the built-in landlock",
          "[front][cli]") {
  itest::Scratch s;
  // A directory holding a plugin file named landlock: the caller's file comes first.
  fs::create_directories(s / "plugins");
  fs::copy_file(fs::path(CORDON_TEST_PLUGINS) / "good" / "cordon-backend-good.so",
                s / "plugins" / "cordon-backend-landlock.so");
  auto alone = run(lone_front(s / "alone"),
                   {"run", "--backend", "landlock", "--plugin-dir", (s / "plugins").string(),
                    "--workspace", s.dir.string(), "--", "/bin/true"});
  INFO(alone.err);
  CHECK(alone.status == 125);
  CHECK(refused_hand_off(alone, s / "alone"));
}

TEST_CASE("front: a yaml policy is read by the full executable", "[front][cli]") {
  itest::Scratch s;
  std::ofstream(s / "p.yaml") << "version: 1\nfilesystem:\n  read: host\n";
  std::vector<std::string> args = {
      "run",         "--backend",    "none", "--policy", (s / "p.yaml").string(),
      "--workspace", s.dir.string(), "--",   "/bin/true"};
  auto here = itest::run_cli(args, {{"CORDON_LOG", "debug"}});
  INFO(here.err);
  CHECK(handed_off(here));
  CHECK(here.err.find("cordon-policy-yaml.so") != std::string::npos);
  // `none` refuses what the policy confines: the point is that the policy was read.
  CHECK(here.err.find("CRD1001") != std::string::npos);
  auto alone = run(lone_front(s / "alone"), args);
  CHECK(alone.status == 125);
  CHECK(refused_hand_off(alone, s / "alone"));
}

TEST_CASE("front: a run that reads cordon's stdin is handed off before reading it",
          "[front][cli]") {
  itest::Scratch s;
  std::string policy = landlock_policy(s);
  if (policy.empty()) return;
  std::string tail = " run --stdin - --backend landlock --policy " + policy + " --workspace " +
                     s.dir.string() + " -- /bin/cat";
  auto here = run("/bin/sh", {"-c", "printf 'from stdin' | " + std::string(CORDON_CLI) + tail});
  INFO(here.err);
  CHECK(here.status == 0);
  CHECK(here.out == "from stdin");
  auto front = lone_front(s / "alone");
  auto alone = run("/bin/sh", {"-c", "printf 'from stdin' | " + front.string() + tail});
  CHECK(alone.status == 125);
  CHECK(alone.out.empty());
  CHECK(refused_hand_off(alone, s / "alone"));
}

TEST_CASE("front: as root, a workspace owner outside /etc/passwd is looked up by the full one",
          "[front][cli]") {
  if (!as_root("only root maps the sandbox to the workspace's owner")) return;
  itest::Scratch s;
  std::string policy = landlock_policy(s);
  if (policy.empty()) return;
  fs::create_directories(s / "ws");
  // 65534 (nobody) is in /etc/passwd; 3987654 is in no user database.
  for (uid_t owner : {65534u, 3987654u}) {
    INFO("owner " << owner);
    REQUIRE(::chown((s / "ws").c_str(), owner, owner) == 0);
    std::vector<std::string> args = {"run",         "--backend",   "landlock",          "--policy",
                                     policy,        "--workspace", (s / "ws").string(), "--",
                                     "/usr/bin/id", "-u"};
    auto r = itest::run_cli(args, {{"CORDON_LOG", "debug"}});
    INFO(r.err);
    CHECK(r.status == 0);
    CHECK(r.out == std::to_string(owner) + "\n");
    CHECK(handed_off(r) == (owner != 65534u));
    if (owner != 65534u) CHECK(r.err.find("libnss") != std::string::npos);
  }
}

TEST_CASE("front: without /proc it refuses to hand off, and never runs a 'cordon' of the cwd",
          "[front][cli]") {
  if (!as_root("only root can unmount /proc in a mount namespace of its own")) return;
  itest::Scratch s;
  // A program named like the full executable's file, where a relative name would find it.
  std::ofstream(s / "cordon") << "#!/bin/sh\ntouch " << (s / "ran").string() << "\n";
  fs::permissions(s / "cordon", fs::perms::owner_all);
  std::string script = "cd " + s.dir.string() + " && umount -l /proc && exec " +
                       std::string(CORDON_CLI) + " version";
  auto r =
      run("/usr/bin/unshare", {"--mount", "--propagation", "private", "/bin/sh", "-c", script});
  INFO(r.err);
  CHECK(r.status == 2);
  CHECK(r.err.find("CRD3014") != std::string::npos);
  CHECK(r.err.find("/proc/self/exe cannot be read") != std::string::npos);
  CHECK_FALSE(fs::exists(s / "ran"));
}

// The front end starts the landlock keeper (the sandbox's pid 1, on the front end's memory) before
// it parses the command line. One the run does not take must be killed and reaped by cordon: a
// run that keeps the host network (the prestarted keeper made a network namespace), a refusal,
// a hand-off. As a subreaper, this process would inherit a keeper cordon left behind.
TEST_CASE("front: a keeper no run takes is gone when cordon is", "[front][cli][userns]") {
  REQUIRE(::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0);
  itest::Scratch s;
  std::string policy = landlock_policy(s);
  if (policy.empty()) return;
  std::ofstream(s / "net.toml") << kPolicy << "[network]\nallow = true\n";
  std::ofstream(s / "p.yaml") << "version: 1\nfilesystem:\n  read: host\n";
  std::string yaml = (s / "p.yaml").string();
  auto marker = escape::unique_marker("cordon-front-keeper");
  auto cases = std::vector<std::vector<std::string>>{
      // taken: the policy's network is denied, as the keeper assumed
      {"run", "--backend", "landlock", "--policy", policy, "--", "/bin/echo", marker},
      // not taken: the host network is kept
      {"run", "--backend", "landlock", "--policy", (s / "net.toml").string(), "--", "/bin/echo",
       marker},
      // handed off: a YAML policy is read by the full executable (which takes its own keeper)
      {"run", "--backend", "landlock", "--policy", yaml, "--", "/bin/echo", marker},
      // refused by the front end itself: no program
      {"run", "--backend", "landlock", "--policy", policy, marker}};
  for (const auto& args : cases) {
    auto r = itest::run_cli(args);
    INFO(args[3] << " " << args.back() << ": status " << r.status << "\n" << r.err);
    if (args.size() == 8) CHECK(r.out == marker + "\n");  // the runs that get to run
    CHECK(escape::pids_with_marker(marker).empty());
    errno = 0;
    CHECK(::waitpid(-1, nullptr, WNOHANG) == -1);  // no child left at all, not even a zombie
    CHECK(errno == ECHILD);
  }
  ::prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
}

// The front end's keeper is cloned into the front end's own memory (no copy of it to make, to
// fault in again and to tear down), with a thread pointer and a stack of its own, where the
// front end is static (else forked); the command's process has its own memory once it has
// executed. Root only: comparing the memory of a process
// that is not dumpable (the keeper makes itself so, and with it the front end) takes root.
TEST_CASE("front: its keeper shares the front end's memory, the command has its own",
          "[front][cli][userns]") {
  if (!as_root("kcmp of a process that is not dumpable needs root")) return;
  itest::Scratch s;
  std::string policy = landlock_policy(s);
  if (policy.empty()) return;
  pid_t cordon = ::fork();
  if (cordon == 0) {
    ::execl(CORDON_CLI, CORDON_CLI, "run", "--backend", "landlock", "--policy", policy.c_str(),
            "--", "/bin/sleep", "30", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  REQUIRE(cordon > 0);
  pid_t keeper = -1, command = -1;
  for (int i = 0; i < 400 && (keeper < 0 || command < 0); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    for (pid_t child : children_of(cordon)) {
      // NSpid: its pid here, then in the sandbox's namespace; the keeper is the sandbox's 1.
      std::istringstream ns(status_field(child, "NSpid:"));
      std::vector<long> ids;
      for (long id; ns >> id;) ids.push_back(id);
      if (ids.size() == 2 && ids[1] == 1) keeper = child;
      if (ids.size() == 2 && ids[1] != 1 && status_field(child, "Name:") == "\tsleep")
        command = child;
    }
  }
  INFO("cordon " << cordon << ", keeper " << keeper << ", command " << command);
  CHECK(keeper > 0);
  CHECK(command > 0);
  // Only a static x86-64 front end can give its keeper thread data of its own (keeper_shared.hpp);
  // a sanitizer build's dynamic one forks it, as the fallback must.
  const bool shares = CORDON_FRONT_STATIC && kX86_64;
  if (keeper > 0) CHECK((same_memory(cordon, keeper) == 0) == shares);
  if (command > 0) CHECK(same_memory(cordon, command) > 0);
  ::kill(cordon, SIGTERM);
  int status = 0;
  REQUIRE(::waitpid(cordon, &status, 0) == cordon);
  for (pid_t gone : {keeper, command})
    if (gone > 0) CHECK(::kill(gone, 0) == -1);
}
