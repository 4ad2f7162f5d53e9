// cordon's own job state against another user: a state directory someone else prepared is
// refused by root, naming it; root without HOME never keeps jobs in a shared directory; the
// supervisor never reads its job from the job directory. (jobs_records_test.cpp: what a job
// or another process writes into the job directory.)
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cordon/jobs.hpp>
#include <cordon/policy_loader.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "job_attacker.hpp"

using namespace itest;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

// `cordon ARGS` as root with HOME set and XDG_STATE_HOME unset.
escape::Exit cordon_home(std::vector<std::string> args, const fs::path& home) {
  escape::SpawnOptions o;
  o.argv = {CORDON_CLI};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.set_env = {{"HOME", home.string()}};
  o.unset_env = {"XDG_STATE_HOME"};
  return escape::run_process(o);
}

// A scratch tree: a shared sticky directory (as /tmp is), a root-only file an attacker would
// like overwritten, a workspace and a policy.
struct Shared {
  Scratch scratch;
  fs::path tmp = scratch / "tmp", crontab = scratch / "crontab", ws = scratch / "ws";
  std::string policy = (scratch / "policy.toml").string();
  Shared() {
    fs::create_directories(tmp);
    fs::permissions(tmp, fs::perms(01777));
    std::ofstream(crontab) << "root's own\n";
    fs::permissions(crontab, fs::perms(0600));
    fs::create_directories(ws);
    std::ofstream(policy) << "version = 1\n[policy]\nname = \"state-test\"\n";
  }
  std::vector<std::string> start(const std::string& state_dir = "") const {
    std::vector<std::string> a = {"job", "start", "--policy", policy, "--workspace", ws.string()};
    if (!state_dir.empty()) a.insert(a.begin() + 2, {"--state-dir", state_dir});
    a.insert(a.end(), {"--", "sh", "-c", "echo ran"});
    return a;
  }
};

}  // namespace

TEST_CASE("jobs: a state directory another user prepared is refused by root, naming it",
          "[jobs][state][root]") {
  auto user = attacker();
  if (!user || !landlock_usable(Shared().policy)) return;
  Shared s;
  // With HOME at the shared directory (as HOME unset once meant /tmp), the attacker makes
  // .local/state/cordon and points jobs at a root-only place.
  auto made = as_user({"/bin/sh", "-c",
                       "mkdir -p \"$0/.local/state/cordon\" && ln -s \"$1\" "
                       "\"$0/.local/state/cordon/jobs\"",
                       s.tmp.string(), s.crontab.parent_path().string()});
  REQUIRE(made.status == 0);
  auto r = cordon_home(s.start(), s.tmp);
  INFO(r.err);
  CHECK(r.status == 2);
  CHECK(r.err.find("CRD1006") != std::string::npos);
  CHECK(r.err.find("'" + (s.tmp / ".local").string() + "' is owned by uid " +
                   std::to_string(user->pw_uid)) != std::string::npos);
  // The same named with --state-dir, and every other verb: nothing is read through it either.
  auto named =
      itest::run_cli({"job", "list", "--state-dir", (s.tmp / ".local/state/cordon/jobs").string()});
  CHECK(named.err.find("CRD1006") != std::string::npos);
  CHECK(slurp(s.crontab) == "root's own\n");
  // A symlink of the attacker's at the first level is refused as such.
  REQUIRE(as_user({"/bin/ln", "-s", s.scratch.dir.string(), (s.tmp / "link").string()}).status ==
          0);
  auto linked = itest::run_cli(s.start((s.tmp / "link" / "jobs").string()));
  CHECK(linked.err.find("'" + (s.tmp / "link").string() + "' is a symlink") != std::string::npos);
  CHECK_FALSE(fs::exists(s.scratch / "jobs"));
  // The allowed twin: without the attacker's directory, root makes its own and the job runs.
  fs::remove_all(s.tmp / ".local");
  auto ok = cordon_home(s.start(), s.tmp);
  INFO(ok.err);
  REQUIRE(ok.status == 0);
  std::string id = ok.out.substr(0, ok.out.find('\n'));
  auto w = cordon_home({"job", "wait", id}, s.tmp);
  CHECK(w.status == 0);
  fs::path jobs = s.tmp / ".local/state/cordon/jobs";
  struct stat st {};
  REQUIRE(::lstat(jobs.c_str(), &st) == 0);
  CHECK(st.st_uid == 0);
  CHECK((st.st_mode & 07777) == 0700);
  CHECK(slurp(jobs / id / "output.log") == "ran\n");
}

TEST_CASE("jobs: root without HOME keeps jobs in /var/lib/cordon, never in a shared /tmp",
          "[jobs][state][root]") {
  if (::geteuid() != 0) {
    WARN("skipped: the default for root");
    return;
  }
  escape::SpawnOptions o;
  o.argv = {CORDON_CLI, "job", "list", "--all", "--json"};
  o.unset_env = {"HOME", "XDG_STATE_HOME"};
  auto r = escape::run_process(o);
  INFO(r.err);
  CHECK(r.status == 0);
  // Listing makes nothing; had it looked in /tmp/.local, a user's directory there would count.
  CHECK_FALSE(fs::exists("/tmp/.local/state/cordon/jobs"));
  o.argv = {CORDON_CLI, "job", "status", "j000000000000000000000000"};
  CHECK(escape::run_process(o).err.find("CRD6001") != std::string::npos);
}

TEST_CASE("jobs: the supervisor takes its job from its starter, never from the job directory",
          "[jobs][state][api]") {
  Scratch s;
  fs::path ws = s / "ws", secret = s / "secret";
  fs::create_directories(ws);
  fs::create_directories(secret);
  std::ofstream(secret / "key") << "the secret\n";
  std::string policy_file = (s / "policy.toml").string();
  std::ofstream(policy_file) << "version = 1\n[policy]\nname = \"own\"\n";
  if (!landlock_usable(policy_file)) return;
  // The fastest attacker there can be: it rewrites the job's policy file before the supervisor
  // runs. (A rewritten job record is refused outright: its seal does not hold, below.)
  fs::path wrapper = s / "cordon-wrapper";
  std::ofstream(wrapper) << "#!/bin/sh\n"
                            "printf '%s\\n' 'version = 1' '[policy]' 'name = \"forged\"' "
                            "'[filesystem]' 'read = \"host\"' > \"$3/policy.toml.w\"\n"
                            "mv -f \"$3/policy.toml.w\" \"$3/policy.toml\"\n"
                            "exec \"" CORDON_CLI "\" \"$@\"\n";
  fs::permissions(wrapper, fs::perms(0755));
  auto run = [&](const std::string& extra) {
    std::ofstream(policy_file) << "version = 1\n[policy]\nname = \"own\"\n" << extra;
    cordon::JobManagerOptions options;
    options.state_dir = s / "state";
    options.cordon_exe = wrapper;
    cordon::JobManager manager(options);
    cordon::JobSpec spec;
    spec.workspace = ws;
    spec.policy =
        cordon::resolve_paths(cordon::load_policy_file(policy_file), {ws, "/nonexistent-home"});
    spec.backend = "landlock";
    spec.argv = {"sh", "-c", "cat " + (secret / "key").string() + " 2>&1; echo done"};
    auto id = manager.start(spec).id;
    auto info = manager.wait(id, 30s);
    CHECK(info.status == cordon::JobStatus::exited);
    return manager.output(id);
  };
  auto out = run("");
  INFO(out);
  CHECK(out.find("done") != std::string::npos);
  CHECK(out.find("forged") == std::string::npos);
  CHECK(out.find("the secret") == std::string::npos);
  // The allowed twin: the policy it was started with may grant the read.
  auto granted = run(
      "[filesystem]\nread = [\"/usr\", \"/lib\", \"/lib64\", \"/bin\", \"/sbin\", \"/etc\", \"" +
      secret.string() + "\"]\n");
  INFO(granted);
  CHECK(granted.find("the secret") != std::string::npos);
}
