// cordon's own job records against the jobs themselves and against another process: what a
// lost job left is ended, and its record kept while it may live; a job that rewrites the next
// jobs' files never changes what they run; a record something else rewrote is never acted on.
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cordon/jobs.hpp>
#include <cordon/policy_loader.hpp>

#include <boost/json.hpp>

#include <chrono>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>
#include <vector>

#include "cli.hpp"
#include "job_attacker.hpp"

using namespace itest;
using namespace std::chrono_literals;
namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

// What a failed check would leave behind, killed at the end of the test: every process carrying
// one of `markers`, and the group of one that leads its own (a job's shell, a setsid bystander),
// else the `sleep` it started outlives the test.
struct Reap {
  std::vector<std::string> markers;
  ~Reap() {
    for (const auto& m : markers)
      for (pid_t pid : escape::pids_with_marker(m))
        ::kill(::getpgid(pid) == pid ? -pid : pid, SIGKILL);
  }
};

// `record` (a job record's JSON text) sealed as the user's cordon seals it: HMAC-SHA256, by
// openssl rather than cordon's own code, under the key in their own state, over the job's id,
// the record's name and the record without its seal. The test stands in for a cordon that wrote
// such a record; a command that can write the job directory cannot read that key.
std::string sealed_as_cordon(const passwd& user, const std::string& id, const std::string& name,
                             const std::string& record) {
  std::string key = slurp(fs::path(user.pw_dir) / ".local/state/cordon/job-seal.key");
  REQUIRE(key.size() == 32);
  std::string hex;
  for (unsigned char c : key) {
    static const char* digits = "0123456789abcdef";
    hex += digits[c >> 4];
    hex += digits[c & 15];
  }
  auto object = json::parse(record).as_object();
  object.erase("seal");
  std::string text = json::serialize(object);
  char path[] = "/tmp/cordon-seal-XXXXXX";
  int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  std::string message = id + std::string(1, '\0') + name + std::string(1, '\0') + text;
  REQUIRE(::write(fd, message.data(), message.size()) == static_cast<ssize_t>(message.size()));
  ::close(fd);
  escape::SpawnOptions o;
  o.argv = {"/usr/bin/openssl", "dgst",          "-sha256", "-mac", "HMAC",
            "-macopt",          "hexkey:" + hex, "-r",      path};
  auto r = escape::run_process(o);
  ::unlink(path);
  REQUIRE(r.status == 0);
  // As cordon writes it: the seal the last member, appended to the text it seals.
  return text.substr(0, text.size() - 1) + ",\"seal\":\"" + r.out.substr(0, 64) + "\"}";
}

// The test user's jobs in a directory of theirs under a scratch directory, with an open policy:
// `cordon(args)` runs `cordon ARGS[0] ARGS[1] --state-dir DIR ARGS[2...]` as the user.
struct UserJobs {
  Scratch s;
  fs::path state = s / "user-state";
  std::string policy = (s / "open.toml").string();

  explicit UserJobs(const passwd& user) {
    fs::create_directories(state);
    REQUIRE(::chown(state.c_str(), user.pw_uid, user.pw_gid) == 0);
    fs::permissions(state, fs::perms(0700));
    std::ofstream(policy) << "version = 1\n[policy]\nname = \"open\"\n[network]\nallow = true\n"
                             "[filesystem]\nread = \"host\"\nwrite = \"host\"\n";
  }
  escape::Exit cordon(std::vector<std::string> args) const {
    args.insert(args.begin(), CORDON_CLI);
    args.insert(args.begin() + 3, {"--state-dir", state.string()});
    return as_user(args);
  }
};

}  // namespace

TEST_CASE("jobs: what a lost job left is ended by stop, and gc keeps a record while it may live",
          "[jobs][state][root]") {
  auto user = attacker();
  if (!user) return;
  UserJobs jobs(*user);
  Scratch& s = jobs.s;
  const fs::path& state = jobs.state;
  const std::string& policy = jobs.policy;
  auto user_cordon = [&](std::vector<std::string> args) { return jobs.cordon(std::move(args)); };
  // A `none` job whose supervisors are both killed at once: its background process lives on,
  // in the session its supervisor ran in.
  auto lose_one = [&](const std::string& marker) {
    auto r =
        user_cordon({"job", "start", "--backend", "none", "--policy", policy, "--workspace",
                     s.dir.string(), "--", "sh", "-c",
                     "sh -c 'sleep 1000; : " + marker + "' & echo up; sleep 1000; : " + marker});
    INFO(r.err);
    REQUIRE(r.status == 0);
    std::string id = r.out.substr(0, r.out.find('\n'));
    for (int i = 0; i < 100 && slurp(state / id / "output.log").empty(); ++i)
      std::this_thread::sleep_for(50ms);
    auto sup = json::parse(slurp(state / id / "supervisor.json")).as_object();
    // The supervisor and the backend's supervising process share its group (its session's).
    ::kill(-static_cast<int>(sup.at("session").as_int64()), SIGKILL);
    std::this_thread::sleep_for(300ms);
    return id;
  };
  auto marker = escape::unique_marker("cordon-lost-job");
  Reap reap{{marker}};
  auto id = lose_one(marker);
  auto list = user_cordon({"job", "list"});
  CHECK(list.out.find(id + "\tlost") != std::string::npos);
  CHECK(list.err.find("of its processes are alive") != std::string::npos);
  REQUIRE_FALSE(escape::pids_with_marker(marker).empty());
  std::string job_json = slurp(state / id / "job.json");
  auto at = job_json.find("\"backend\":\"none\"");
  REQUIRE(at != std::string::npos);
  auto forged = job_json;
  forged.replace(at, 16, "\"backend\":\"nada\"");
  // A record rewritten by anything but cordon (its seal no longer holds) is not acted on: gc
  // keeps it and names it.
  REQUIRE(as_user({"/bin/sh", "-c", "printf '%s' \"$1\" > \"$0\"",
                   (state / id / "job.json").string(), forged})
              .status == 0);
  auto listed = user_cordon({"job", "list", "--all"});
  CHECK(listed.out.find(id) == std::string::npos);
  CHECK(listed.err.find("not listed: job " + id + ": job state file") != std::string::npos);
  auto untrusted = user_cordon({"job", "gc"});
  INFO(untrusted.err);
  CHECK(untrusted.out == "removed 0 ended job(s)\n");
  CHECK(untrusted.err.find("kept job " + id + ": job state file") != std::string::npos);
  CHECK(untrusted.err.find("is not sealed by this user's cordon") != std::string::npos);
  CHECK(fs::exists(state / id));
  // gc cannot confirm what a job of an unknown backend left: the record stays.
  forged = sealed_as_cordon(*user, id, "job.json", forged);
  REQUIRE(as_user({"/bin/sh", "-c", "printf '%s' \"$1\" > \"$0\"",
                   (state / id / "job.json").string(), forged})
              .status == 0);
  auto kept = user_cordon({"job", "gc"});
  CHECK(kept.out == "removed 0 ended job(s)\n");
  INFO(kept.err);
  CHECK(kept.err.find("kept job " + id) != std::string::npos);
  CHECK(fs::exists(state / id));
  // Nor does a record choose the code that collects: a plugin directory it names is not
  // searched (a sandbox that wrote it would run its own code outside), one the caller names is.
  std::string good = std::string(CORDON_TEST_PLUGINS) + "/good";
  auto dirs = forged.find("\"plugin_dirs\":[]");
  REQUIRE(dirs != std::string::npos);
  forged.replace(dirs, 16, "\"plugin_dirs\":[\"" + good + "\"]");
  at = forged.find("\"backend\":\"nada\"");
  REQUIRE(at != std::string::npos);
  forged.replace(at, 16, "\"backend\":\"good\"");
  forged = sealed_as_cordon(*user, id, "job.json", forged);
  REQUIRE(as_user({"/bin/sh", "-c", "printf '%s' \"$1\" > \"$0\"",
                   (state / id / "job.json").string(), forged})
              .status == 0);
  auto refused = user_cordon({"job", "gc"});
  INFO(refused.err);
  CHECK(refused.out == "removed 0 ended job(s)\n");
  CHECK(refused.err.find("backend 'good' cannot be loaded") != std::string::npos);
  CHECK(fs::exists(state / id));
  auto named = user_cordon({"job", "gc", "--plugin-dir", good});
  INFO(named.err);
  CHECK(named.out == "removed 1 ended job(s)\n");
  CHECK_FALSE(fs::exists(state / id));
  // stop ends what is left, and says so; then gc drops the record.
  auto id2 = lose_one(marker);
  auto stop = user_cordon({"job", "stop", id2, "--grace", "1s"});
  INFO(stop.err);
  CHECK(stop.status == 0);
  CHECK(stop.err.find("leftover process") != std::string::npos);
  auto gc = user_cordon({"job", "gc"});
  CHECK(gc.out == "removed 1 ended job(s)\n");
  CHECK_FALSE(fs::exists(state / id));
  CHECK(escape::pids_with_marker(marker).empty());
}

TEST_CASE("jobs: a job that rewrites the next jobs' files for 10 s never changes what they run",
          "[jobs][state][root][race]") {
  auto user = attacker();
  if (!user) return;
  Scratch s;
  fs::path state = s / "user-state", secret = s / "secret", ws = s / "ws";
  for (const auto& d : {state, secret, ws}) {
    fs::create_directories(d);
    REQUIRE(::chown(d.c_str(), user->pw_uid, user->pw_gid) == 0);
  }
  fs::permissions(state, fs::perms(0700));
  std::ofstream(secret / "key") << "the secret\n";
  REQUIRE(::chown((secret / "key").c_str(), user->pw_uid, user->pw_gid) == 0);
  std::string victim = (s / "victim.toml").string(), writer = (s / "writer.toml").string();
  std::ofstream(victim) << "version = 1\n[policy]\nname = \"victim\"\n";
  // The attacker's grant names the state directory outright (as `write = ["~"]` covers
  // ~/.local/state): whether or not the sandbox can reach it, the jobs must not change.
  std::ofstream(writer) << "version = 1\n[policy]\nname = \"writer\"\n[filesystem]\nwrite = [\""
                        << state.string() << "\"]\n";
  auto user_cordon = [&](std::vector<std::string> args) {
    args.insert(args.begin(), CORDON_CLI);
    args.insert(args.begin() + 3, {"--state-dir", state.string()});
    return as_user(args);
  };
  auto usable = as_user({CORDON_CLI, "run", "--backend", "landlock", "--policy", victim,
                         "--workspace", ws.string(), "--", "/bin/true"});
  if (usable.status != 0) {
    if (in_ci()) FAIL("landlock cannot run as " << test_user() << ": " << usable.err);
    WARN("skipped: landlock cannot run as " << test_user() << ": " << usable.err);
    return;
  }
  auto started =
      user_cordon({"job", "start", "--backend", "landlock", "--policy", writer, "--workspace",
                   ws.string(), "--", "sh", "-c",
                   "while :; do for d in \"$0\"/j*; do printf '%s\\n' 'version = 1' '[policy]' "
                   "'name = \"forged\"' '[filesystem]' 'read = \"host\"' > \"$d/.p\" && "
                   "mv \"$d/.p\" \"$d/policy.toml\"; printf '{\"argv\":[\"sh\",\"-c\",\"echo "
                   "forged\"],\"backend\":\"landlock\"}' > \"$d/.j\" && mv \"$d/.j\" "
                   "\"$d/job.json\"; done; done 2>/dev/null",
                   state.string()});
  REQUIRE(started.status == 0);
  std::string writer_id = started.out.substr(0, started.out.find('\n'));
  struct StopWriter {  // also when a check below fails
    std::function<void()> stop;
    ~StopWriter() { stop(); }
  } stop_writer{[&] { user_cordon({"job", "stop", writer_id, "--grace", "100ms"}); }};
  int runs = 0, leaks = 0;
  // For 10 s and at least 6 jobs: a slow host (a sanitizer build) still gives the race as many
  // chances, and no figure of this host's speed is asserted.
  auto end = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < end || runs < 6) {
    auto r = user_cordon({"job", "start", "--backend", "landlock", "--policy", victim,
                          "--workspace", ws.string(), "--", "sh", "-c",
                          "cat " + (secret / "key").string() + " 2>/dev/null; echo done"});
    INFO(r.err);
    REQUIRE(r.status == 0);
    std::string id = r.out.substr(0, r.out.find('\n'));
    user_cordon({"job", "wait", id, "--timeout", "20s"});
    auto out = user_cordon({"job", "output", id}).out;
    ++runs;
    if (out != "done\n") {
      ++leaks;
      WARN("job " << id << " printed: " << out);
    }
  }
  int forged = 0;  // how far the sandbox got (none once the state directory is masked)
  for (const auto& e : fs::directory_iterator(state))
    forged += slurp(e.path() / "policy.toml").find("forged") != std::string::npos;
  INFO(runs << " jobs; " << forged << " policy files rewritten by the sandbox");
  CHECK(leaks == 0);
  // The allowed twin: the secret is there to be read by a policy that grants it.
  auto twin = as_user({CORDON_CLI, "run", "--backend", "landlock", "--policy", victim,
                       "--workspace", secret.string(), "--", "cat", "key"});
  CHECK(twin.out == "the secret\n");
}

TEST_CASE("jobs: a job record that something else rewrote is never acted on",
          "[jobs][state][root]") {
  auto user = attacker();
  if (!user) return;
  // A job directory a command of another run could write (inside its workspace, say).
  UserJobs jobs(*user);
  auto marker = escape::unique_marker("cordon-sealed-job");
  auto bystander = escape::unique_marker("cordon-bystander");
  Reap reap{{marker, bystander}};
  auto started =
      jobs.cordon({"job", "start", "--backend", "none", "--policy", jobs.policy, "--workspace",
                   jobs.s.dir.string(), "--", "sh", "-c", "echo up; sleep 1000; : " + marker});
  INFO(started.err);
  REQUIRE(started.status == 0);
  std::string id = started.out.substr(0, started.out.find('\n'));
  for (int i = 0; i < 100 && slurp(jobs.state / id / "output.log").empty(); ++i)
    std::this_thread::sleep_for(50ms);
  // Another process of the same user, in a session of its own: not the job's.
  REQUIRE(as_user({"/bin/sh", "-c",
                   "setsid sh -c 'sleep 1000; : " + bystander + "' </dev/null >/dev/null 2>&1 &"})
              .status == 0);
  std::vector<pid_t> victims;
  for (int i = 0; i < 100 && victims.empty(); ++i) {
    victims = escape::pids_with_marker(bystander);
    if (victims.empty()) std::this_thread::sleep_for(20ms);
  }
  REQUIRE(victims.size() == 1);
  pid_t victim = victims[0];
  std::string stat = slurp("/proc/" + std::to_string(victim) + "/stat");
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string field, ticks;
  for (int i = 3; i <= 22 && fields >> field; ++i)
    if (i == 22) ticks = field;
  REQUIRE_FALSE(ticks.empty());
  // The supervisor's record rewritten to name the bystander, its start time and its session:
  // stop would signal it, and end its session, if it believed the record.
  const std::string real = slurp(jobs.state / id / "supervisor.json");
  const std::string forged = "{\"pid\":" + std::to_string(victim) + ",\"start_ticks\":" + ticks +
                             ",\"session\":" + std::to_string(::getsid(victim)) + "}";
  auto write_record = [&](const std::string& text) {
    REQUIRE(as_user({"/bin/sh", "-c", "printf '%s' \"$1\" > \"$0\"",
                     (jobs.state / id / "supervisor.json").string(), text})
                .status == 0);
  };
  // Alive, and not a zombie (which kill(pid, 0) would still find).
  auto alive = [](pid_t pid) {
    std::string st = slurp("/proc/" + std::to_string(pid) + "/stat");
    auto close = st.rfind(')');
    return close != std::string::npos && close + 2 < st.size() && st[close + 2] != 'Z' &&
           st[close + 2] != 'X';
  };
  write_record(forged);
  auto stop = jobs.cordon({"job", "stop", id, "--grace", "1s"});
  INFO(stop.err);
  CHECK(stop.status != 0);
  CHECK(stop.err.find("CRD1006") != std::string::npos);
  std::this_thread::sleep_for(300ms);
  CHECK(alive(victim));
  CHECK_FALSE(escape::pids_with_marker(marker).empty());  // nor was the job touched
  // Both ways: with its own record, the job stops, and the bystander lives on.
  write_record(real);
  auto stopped = jobs.cordon({"job", "stop", id, "--grace", "1s"});
  INFO(stopped.err);
  CHECK(stopped.status == 0);
  for (int i = 0; i < 100 && !escape::pids_with_marker(marker).empty(); ++i)
    std::this_thread::sleep_for(20ms);
  CHECK(escape::pids_with_marker(marker).empty());
  CHECK(alive(victim));
}
