// The canary probe (canary.hpp): its private directory, its checks, each a run under the profile
// of a small policy, and the verdict; what its findings prove is in canary_proofs.cpp.
#include "canary.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cordon/sdk/capabilities.hpp>
#include <cordon/sdk/child.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <random>
#include <sstream>
#include <string_view>

#include "canary_proofs.hpp"
#include "seatbelt_backend.hpp"

namespace cordon::seatbelt {

namespace {

namespace fs = std::filesystem;

// Prints $2 into the file $1: the write checks.
constexpr const char* kWrite = "printf '%s\\n' \"$2\" > \"$1\"";
// Prints the first line of the file $1 with the shell's own redirection, no other program.
constexpr const char* kRead = "read -r line < \"$1\" && printf '%s\\n' \"$line\"";
// Runs the program $1.
constexpr const char* kRun = "\"$1\"";
// Copies the program $1 to $2 and runs the copy.
constexpr const char* kCopyRun = "cp \"$1\" \"$2\"; chmod 700 \"$2\"; \"$2\"";
// Connects to 127.0.0.1 on the port $1 (bash's /dev/tcp: no other program needed).
constexpr const char* kConnect = "exec 3<>\"/dev/tcp/127.0.0.1/$1\" && echo connected";
// Shows HOME: its mode, its entries, its path.
constexpr const char* kHome =
    "ls -ld \"$HOME\" && ls -A \"$HOME\" && printf 'home=%s\\n' \"$HOME\"";
// Makes $2 a new hard link of the file $1, then prints its first line as kRead does.
constexpr const char* kLinkRead =
    "ln \"$1\" \"$2\" && read -r line < \"$2\" && printf '%s\\n' \"$line\"";

std::string random_token() {
  std::random_device rd;
  std::string out = "cordon-canary-";
  for (int i = 0; i < 4; ++i) {
    char b[9];
    std::snprintf(b, sizeof b, "%08x", static_cast<unsigned>(rd()));
    out += b;
  }
  return out;
}

// The canary's private directory: a directory it may write, one it may not, a blocked file that
// holds a random token, with a second name (a hard link) beside it, and a blocked program that
// prints the token. Removed with everything in it.
struct CanaryDir {
  std::string root, granted, outside, secret, alias, program, token = random_token();
  std::string readable, unreadable;  ///< files with the token: in the grant, and outside it
  std::string error;                 ///< why it could not be made; empty when it was

  CanaryDir() {
    std::string templ = (fs::temp_directory_path() / "cordon-seatbelt-canary-XXXXXX").string();
    if (!::mkdtemp(templ.data())) {
      error = "cannot make its directory under '" + fs::temp_directory_path().string() +
              "': " + std::strerror(errno);
      return;
    }
    root = templ;
    granted = root + "/granted";
    outside = root + "/outside";
    secret = root + "/secret";
    alias = root + "/secret-alias";
    program = root + "/blocked-program";
    readable = granted + "/readable";
    unreadable = outside + "/unreadable";
    if (::mkdir(granted.c_str(), 0700) != 0 || ::mkdir(outside.c_str(), 0700) != 0) {
      error = "cannot make its directories in '" + root + "': " + std::strerror(errno);
      return;
    }
    std::ofstream(secret) << token << "\n";
    if (read(secret) != token + "\n")
      error = "cannot write its blocked file '" + secret + "'";
    else if (::link(secret.c_str(), alias.c_str()) != 0)
      error = "cannot make a second name of '" + secret + "': " + std::strerror(errno);
    else if (!make_program())
      error = "cannot make its blocked program '" + program + "'";
    std::ofstream(readable) << token << "\n";
    std::ofstream(unreadable) << token << "\n";
    if (error.empty() && (read(readable) != token + "\n" || read(unreadable) != token + "\n"))
      error = "cannot write its files to read in '" + root + "'";
  }
  ~CanaryDir() {
    std::error_code ec;
    if (!root.empty()) fs::remove_all(root, ec);
  }
  CanaryDir(const CanaryDir&) = delete;
  CanaryDir& operator=(const CanaryDir&) = delete;

  bool make_program() const {
    std::ofstream(program) << "#!/bin/sh\necho " << token << "\n";
    return ::chmod(program.c_str(), 0755) == 0;
  }

  static std::string read(const std::string& file) {
    std::ifstream in(file);
    return {std::istreambuf_iterator<char>(in), {}};
  }
};

// Keeps the start of what a canary run printed.
class Collect final : public OutputSink {
 public:
  void write(Stream stream, std::string_view chunk) override {
    std::string& to = stream == Stream::out ? out : err;
    to.append(chunk.substr(0, kKeep - std::min(kKeep, to.size())));
  }
  static constexpr std::size_t kKeep = 4096;
  std::string out, err;
};

// How a canary script runs: by which shell, with the network allowed or not, and reading
// everything (but the blocked file) or only the programs' directories and its grants.
struct Shape {
  const char* shell = "/bin/sh";
  bool network = false;
  bool confined_reads = false;
};

// The canary's policy: everything readable but the blocked file, only `granted` writable.
Plan canary_plan(const CanaryDir& d, const std::vector<std::string>& script_args,
                 const std::string& script, Shape shape) {
  Plan plan;
  plan.policy.name = "seatbelt-canary";
  auto& f = plan.policy.filesystem;
  f.read_host = true;
  f.read.clear();
  f.write = {d.granted};
  f.blocked = {d.secret};
  plan.policy.process.blocked_commands = {d.program};
  plan.policy.network.allow = shape.network;
  plan.argv = {shape.shell, "-c", script, "cordon-canary"};
  plan.argv.insert(plan.argv.end(), script_args.begin(), script_args.end());
  plan.workspace = d.root;
  if (shape.confined_reads) {
    f.read_host = false;
    f.read = {"/bin", "/usr/bin"};
    plan.workspace = d.granted;
  }
  plan.env = {{"PATH", "/usr/bin:/bin"}};
  plan.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  return plan;
}

// The line every canary script prints first: a run without it never got to the script, and
// its exit status says nothing about what the sandbox allowed.
constexpr std::string_view kStarted = "cordon-canary-started";

struct Attempt {
  RunResult result;
  Collect seen;  ///< without the kStarted line
  bool started = false;
  // The script started and ended on its own: its exit status says what the sandbox allowed.
  bool ran() const { return started && !result.error && !result.timed_out && result.signal == 0; }
  // `text` appeared in either stream.
  bool shows(const std::string& text) const {
    return seen.out.find(text) != std::string::npos || seen.err.find(text) != std::string::npos;
  }
  std::string outcome() const {
    if (result.error) return result.error->what();
    if (result.timed_out) return "timed out";
    if (result.signal) return "killed by signal " + std::to_string(result.signal);
    std::string line = seen.err.substr(0, seen.err.find('\n'));
    return "exit " + std::to_string(result.exit_code) + (line.empty() ? "" : ": " + line) +
           (started ? "" : ", before the script started");
  }
};

Attempt attempt(const std::string& launcher, const CanaryDir& d,
                const std::vector<std::string>& args, const char* script, Shape shape = {}) {
  Attempt a;
  std::string marked = "echo " + std::string(kStarted) + "; " + script;
  a.result = run_sandboxed(canary_plan(d, args, marked, shape), a.seen, launcher);
  std::string line = std::string(kStarted) + "\n";
  a.started = a.seen.out.rfind(line, 0) == 0;
  if (a.started) a.seen.out.erase(0, line.size());
  return a;
}

// A TCP listener on 127.0.0.1 for the network check; `port` 0 when none could be made.
struct Listener {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int port = 0;
  Listener() {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
        ::listen(fd, 8) == 0 && ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
      port = ntohs(a.sin_port);
  }
  ~Listener() {
    if (fd >= 0) ::close(fd);
  }
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;
};

// Each check: "" when it held, else what went wrong. The write inside the grant comes first: it
// shows that the launcher runs commands at all, so that the refusals after it mean something.
std::string write_inside(const std::string& launcher, const CanaryDir& d) {
  std::string file = d.granted + "/written";
  Attempt a = attempt(launcher, d, {file, d.token}, kWrite);
  if (!a.ran() || a.result.exit_code != 0)
    return "a write inside the grant failed (" + a.outcome() + ")";
  if (CanaryDir::read(file) != d.token + "\n")
    return "a write inside the grant did not reach '" + file + "'";
  return "";
}

std::string write_outside(const std::string& launcher, const CanaryDir& d) {
  std::string file = d.outside + "/written";
  Attempt a = attempt(launcher, d, {file, d.token}, kWrite);
  std::error_code ec;
  if ((a.ran() && a.result.exit_code == 0) || fs::exists(file, ec))
    return "a write outside the grant worked ('" + file + "' was written)";
  if (!a.ran()) return "the write outside the grant could not be tried (" + a.outcome() + ")";
  return "";
}

// `what` ("the blocked file '…'") read by `script` with `args`: "" when refused, unseen.
std::string refused_read(const std::string& launcher, const CanaryDir& d,
                         const std::vector<std::string>& args, const char* script,
                         const std::string& what) {
  Attempt a = attempt(launcher, d, args, script);
  if (a.shows(d.token)) return what + " was read (its content was printed)";
  if (a.ran() && a.result.exit_code == 0) return what + " was read (the read succeeded)";
  if (!a.ran()) return "the read of " + what + " could not be tried (" + a.outcome() + ")";
  return "";
}

std::string blocked_read(const std::string& launcher, const CanaryDir& d) {
  return refused_read(launcher, d, {d.secret}, kRead, "the blocked file '" + d.secret + "'");
}

// Seatbelt matches paths: the file under a name the policy does not list must be refused too.
std::string other_name_read(const std::string& launcher, const CanaryDir& d) {
  return refused_read(launcher, d, {d.alias}, kRead,
                      "the blocked file's other name (a hard link) '" + d.alias + "'");
}

std::string new_link_read(const std::string& launcher, const CanaryDir& d) {
  std::string link = d.granted + "/link";
  std::string found =
      refused_read(launcher, d, {d.secret, link}, kLinkRead,
                   "a hard link made to the blocked file in the grant ('" + link + "')");
  // A link left in the grant would have every later run refused (CRD1007), not tried.
  std::error_code ec;
  std::filesystem::remove(link, ec);
  return found;
}

// The blocked program run by `script` with `args`: "" when it did not run (its token unseen).
std::string refused_run(const std::string& launcher, const CanaryDir& d,
                        const std::vector<std::string>& args, const char* script,
                        const std::string& what) {
  Attempt a = attempt(launcher, d, args, script);
  if (a.shows(d.token)) return what + " ran";
  // Only a command that ran and ended on its own shows that the program did not.
  if (!a.ran()) return what + " could not be tried (" + a.outcome() + ")";
  return "";
}

std::string blocked_run(const std::string& launcher, const CanaryDir& d) {
  return refused_run(launcher, d, {d.program}, kRun, "the blocked program '" + d.program + "'");
}

std::string copy_run(const std::string& launcher, const CanaryDir& d) {
  std::string copy = d.granted + "/copy";
  return refused_run(launcher, d, {d.program, copy}, kCopyRun,
                     "a copy of the blocked program made in the grant ('" + copy + "')");
}

// A connection to a listener of the host's loopback: it must work with the network allowed (so
// that the attempt means something) and fail with it denied.
std::string network_reached(const std::string& launcher, const CanaryDir& d) {
  Listener l;
  if (l.port == 0) return "the canary could not listen on 127.0.0.1 to try";
  std::vector<std::string> args = {std::to_string(l.port)};
  Attempt allowed = attempt(launcher, d, args, kConnect, {"/bin/bash", true});
  if (allowed.seen.out.find("connected") == std::string::npos)
    return "with the network allowed, a connection to 127.0.0.1 failed too (" + allowed.outcome() +
           "), so its refusal would prove nothing";
  Attempt denied = attempt(launcher, d, args, kConnect, {"/bin/bash", false});
  if (denied.seen.out.find("connected") != std::string::npos)
    return "a connection to the host's 127.0.0.1:" + args[0] + " worked with the network denied";
  if (!denied.ran())
    return "the connection with the network denied could not be tried (" + denied.outcome() + ")";
  return "";
}

// With reads confined to the grants, a file in the grant must be readable (so that the refusal
// means something) and one outside it not.
std::string reads_unconfined(const std::string& launcher, const CanaryDir& d) {
  Shape confined{.confined_reads = true};
  Attempt inside = attempt(launcher, d, {d.readable}, kRead, confined);
  if (inside.seen.out.find(d.token) == std::string::npos)
    return "with reads confined, a file in the grant could not be read either (" +
           inside.outcome() + "), so a refusal would prove nothing";
  Attempt outside = attempt(launcher, d, {d.unreadable}, kRead, confined);
  if (outside.shows(d.token))
    return "with reads confined, the file '" + d.unreadable + "' outside the grant was read";
  if (!outside.ran())
    return "with reads confined, the read outside the grant could not be tried (" +
           outside.outcome() + ")";
  return "";
}

// HOME: a directory of the run for its user alone, empty, not the caller's, gone after the run.
std::string home_shared(const std::string& launcher, const CanaryDir& d) {
  Attempt a = attempt(launcher, d, {}, kHome);
  if (!a.ran() || a.result.exit_code != 0)
    return "HOME could not be looked at (" + a.outcome() + ")";
  std::istringstream out(a.seen.out);
  std::vector<std::string> lines;
  for (std::string line; std::getline(out, line);) lines.push_back(line);
  if (lines.size() != 2 || lines[1].rfind("home=", 0) != 0)
    return "HOME was not empty (entries in it: " + std::to_string(lines.size() - 2) + ")";
  if (lines[0].rfind("drwx------", 0) != 0)
    return "HOME is not a directory for its user alone (" + lines[0] + ")";
  std::string home = lines[1].substr(5);
  const char* caller = std::getenv("HOME");
  if (caller && home == caller) return "HOME is the caller's own ('" + home + "')";
  std::error_code ec;
  if (fs::exists(home, ec)) return "HOME ('" + home + "') outlived the run";
  return "";
}

using Check = std::string (*)(const std::string& launcher, const CanaryDir& d);

// What each of `checks` found, joined: "" when every one held.
std::string failures(const std::string& launcher, const CanaryDir& d,
                     std::initializer_list<Check> checks) {
  std::string out;
  for (Check check : checks)
    if (std::string why = check(launcher, d); !why.empty()) out += (out.empty() ? "" : "; ") + why;
  return out;
}

ProbeResult refused(const std::string& why) {
  ProbeResult r;
  r.available = false;
  r.reason = "seatbelt canary: " + why;
  for (auto id : cap::all()) r.proofs.push_back({std::string(id), false, r.reason});
  return r;
}

}  // namespace

ProbeResult canary_probe(const std::string& launcher) {
  CanaryDir d;
  if (!d.error.empty()) return refused(d.error);
  if (std::string failed = failures(launcher, d, {write_inside, write_outside, blocked_read});
      !failed.empty())
    return refused(failed);
  // The launcher enforces the profile; what it does with a blocked file's other names and with
  // a blocked program decides one proof each, not whether the backend can be used.
  CanaryFindings found{
      failures(launcher, d, {other_name_read, new_link_read}),
      failures(launcher, d, {blocked_run, copy_run}), failures(launcher, d, {network_reached}),
      failures(launcher, d, {home_shared}), failures(launcher, d, {reads_unconfined})};
  ProbeResult r;
  r.available = true;
  prove_canary(r, launcher, found);
  r.facts.push_back("the canary through " + launcher +
                    ": a write inside the grant worked; a write outside it and a read of a "
                    "blocked file were refused");
  r.facts.push_back("cordon policy compile --backend seatbelt prints the profile it would use");
  return r;
}

}  // namespace cordon::seatbelt
