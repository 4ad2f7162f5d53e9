// The remote probe: what the host has, then canaries through a run's own script.
#include "probe.hpp"

#include <cordon/request.hpp>
#include <cordon/sdk/capabilities.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "channel_run.hpp"
#include "remote_cordon.hpp"

namespace cordon::ssh {

const std::string kRoundTrip = std::string("a b;$(echo x)`id`'\"\\\n\t*?~!#&|<>{}\xff\xfe-") + "=";

namespace {

constexpr const char* kDetect = R"sh(echo "uid=$(id -u)"
echo "os=$(uname -s)"
for p in setpriv unshare timeout; do command -v "$p" >/dev/null 2>&1 && echo "have=$p"; done
echo "pidns=$(readlink /proc/self/ns/pid 2>/dev/null)"
unshare --user --map-current-user --pid --fork --kill-child -- /bin/sh -c 'echo "userns=$$"' 2>/dev/null
unshare --pid --fork --kill-child -- /bin/sh -c 'echo "pidonly=$$"' 2>/dev/null
c=$(command -v cordon 2>/dev/null) && echo "cordon=$c"
true)sh";

// The canary's checks, one line each, in this order.
constexpr const char* kChecks = R"sh(printf '%s' "$1" | od -An -tx1 | tr -d ' \n'; echo
echo "limits=$(ulimit -n) $(ulimit -t) $(ulimit -f)"
echo "uid=$(id -u)"
grep '^NoNewPrivs:' /proc/self/status | tr -d ' \t'
grep '^CapEff:' /proc/self/status | tr -d ' \t'
echo "pidns=$(readlink /proc/self/ns/pid)")sh";

std::map<std::string, std::string> fields(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (auto eq = line.find('='); eq != std::string::npos)
      out[line.substr(0, eq)] += (out.count(line.substr(0, eq)) ? "," : "") + line.substr(eq + 1);
  return out;
}

std::string hex(const std::string& s) {
  std::string out;
  char b[3];
  for (unsigned char c : s) {
    std::snprintf(b, sizeof b, "%02x", c);
    out += b;
  }
  return out;
}

// The command's own output: after the script's marker line.
std::string after_marker(const std::string& out) {
  if (out.rfind(kPidMarker, 0) != 0) return "";
  auto nl = out.find('\n');
  return nl == std::string::npos ? "" : out.substr(nl + 1);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

RemoteRun canary(std::vector<std::string> argv) {
  RemoteRun r;
  r.workspace = "/";
  r.env = {{"PATH", "/usr/local/bin:/usr/bin:/bin"}, {"CORDON_CANARY", "1"}};
  r.ulimits = {{'n', 64}, {'t', 60}, {'f', 2048}};
  r.backstop_seconds = 30;
  r.argv = std::move(argv);
  return r;
}

void prove(ProbeResult& r, std::string_view id, bool held, const std::string& how,
           const std::string& why_not) {
  r.proofs.push_back({std::string(id), held, held ? how : why_not});
}

// Keeps what the canary printed.
class Collect final : public OutputSink {
 public:
  void write(Stream stream, std::string_view chunk) override {
    (stream == Stream::out ? out : err).append(chunk.substr(0, 65536));
  }
  std::string out, err;
};

// A run through the remote cordon at `path` that must print the round-trip argument back;
// empty when it did, else what went wrong.
std::string remote_canary(Connection& c, const std::string& path) {
  std::string request = R"({"argv":["printf","%s",{"base64":")" + encode_base64(kRoundTrip) +
                        R"("}],"policy":{"version":1,"policy":{"name":"ssh-canary"}},"backend":")" +
                        kRemoteBackend + R"(","workspace":"/tmp","timeout":"30s"})";
  Plan plan;
  plan.stdin_data = request;
  plan.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(40);
  Collect seen;
  FramedChannelSink framed(seen);
  auto channel = c.exec(cordon_line(path));
  run_channel(c, *channel, plan, framed);
  if (!framed.result()) return "no result came back: " + framed.diagnostics().substr(0, 300);
  RunResult r;
  merge_result(*framed.result(), c.target().name(), r);
  if (r.error) return r.error->what();
  if (seen.out != kRoundTrip)
    return "the canary did not get its argument back byte for byte (it printed '" +
           seen.out.substr(0, 200) + seen.err.substr(0, 200) + "')";
  return "";
}

// The remote cordon's proofs, each with its evidence, as this backend's; false (and `why`)
// when it cannot be used.
bool prove_by_remote_cordon(Connection& c, const std::string& path, HostProof& p,
                            std::string& why) {
  auto listed = c.capture("exec " + sh_quote(path) + " backends --json 2>/dev/null", 60);
  auto proofs = remote_proofs(listed.out, why);
  if (!proofs) return false;
  if (why = remote_canary(c, path); !why.empty()) return false;
  p.cordon = path;
  p.serve = c.capture("exec " + sh_quote(path) + " serve --help >/dev/null 2>&1").status == 0;
  p.result.available = true;
  for (const auto& proof : proofs->proofs)
    p.result.proofs.push_back(
        {proof.capability, proof.proven,
         "the remote cordon " + path + " (" + kRemoteBackend + "): " + proof.evidence});
  return true;
}

}  // namespace

HostProof probe_host(Connection& c) {
  HostProof p;
  ProbeResult& r = p.result;
  auto host = fields(c.capture("exec /bin/sh -c " + sh_quote(kDetect)).out);
  const auto& named = c.target().cordon;
  std::string cordon = named ? (*named == "off" ? "" : *named) : host["cordon"];
  std::string not_used;
  if (!cordon.empty()) {
    if (prove_by_remote_cordon(c, cordon, p, not_used)) {
      r.facts.push_back("host " + c.target().name() + ", host key " + c.fingerprint());
      r.facts.push_back("runs go to the remote cordon " + cordon + " (its " + kRemoteBackend +
                        " backend), the policy sent in each request");
      return p;
    }
    if (named) {  // asked for by name: never a quiet fallback to less
      r.available = false;
      r.reason = c.target().name() + ": the remote cordon " + cordon + " cannot run: " + not_used;
      return p;
    }
  }
  bool root = host["uid"] == "0";
  bool linux_host = host["os"] == "Linux";
  auto has = [&](const char* prog) {
    return ("," + host["have"] + ",").find(std::string(",") + prog + ",") != std::string::npos;
  };
  Wrappers& w = p.wrappers;
  w.no_new_privs = has("setpriv") && linux_host;
  w.user_ns = !root && host["userns"] == "1";
  w.timeout = has("timeout");
  w.pid_namespace = has("unshare") && w.timeout && (w.user_ns || (root && host["pidonly"] == "1"));

  auto env_run = c.capture(remote_line(canary({"env"}), w));
  auto checks = c.capture(remote_line(canary({"/bin/sh", "-c", kChecks, "canary", kRoundTrip}), w));
  auto seen = lines_of(after_marker(checks.out));
  if (seen.empty() || seen[0] != hex(kRoundTrip)) {
    r.available = false;
    r.reason = c.target().name() + ": the canary did not get its arguments back byte for byte " +
               "(the login shell must be a POSIX shell: sh, bash, dash, ksh or zsh); it printed '" +
               checks.out.substr(0, 200) + checks.err.substr(0, 200) + "'";
    return p;
  }
  auto got = fields(after_marker(checks.out));
  auto env_lines = lines_of(after_marker(env_run.out));
  std::sort(env_lines.begin(), env_lines.end());
  bool env_exact = env_lines.size() == 3 && env_lines[0] == "CORDON_CANARY=1" &&
                   env_lines[1].rfind("HOME=", 0) == 0 &&
                   env_lines[2] == "PATH=/usr/local/bin:/usr/bin:/bin";
  bool limits = got["limits"] == "64 60 2048";
  bool unprivileged = got["uid"] != "0" && !got["uid"].empty() &&
                      checks.out.find("NoNewPrivs:1") != std::string::npos &&
                      checks.out.find("CapEff:0000000000000000") != std::string::npos;
  bool own_pidns = !got["pidns"].empty() && got["pidns"] != host["pidns"] && w.pid_namespace;

  r.available = true;
  const std::string shell_only = "not enforced over a plain shell";
  for (auto id : cap::all()) {
    if (id == cap::env_grant)
      prove(r, id, env_exact, "env -i with the granted variables and HOME (checked by a canary)",
            "a canary saw other variables than the granted ones");
    else if (id == cap::limit_files || id == cap::limit_cpu || id == cap::limit_file_size)
      prove(r, id, limits, "ulimit in the remote shell before exec (checked by a canary)",
            "ulimit -n, -t and -f did not hold in a canary");
    else if (id == cap::identity_unprivileged)
      prove(
          r, id, unprivileged,
          "the login " + c.target().user + " is not root; setpriv --no-new-privs; no capabilities",
          root ? "the login is root on the remote host" : "no setpriv --no-new-privs there");
    else if (id == cap::limit_timeout)
      prove(r, id, own_pidns,
            "a pid namespace of the run (unshare --kill-child): killing its first process ends "
            "every process of it, setsid() ones included",
            "no pid namespace on the remote host: a setsid() child would outlive the deadline");
    else
      prove(r, id, false, "", shell_only + " (no remote enforcement for this clause)");
  }
  r.facts.push_back("host " + c.target().name() + ", host key " + c.fingerprint());
  r.facts.push_back(std::string("remote: ") + (host["os"].empty() ? "?" : host["os"]) + ", uid " +
                    host["uid"] + ", tools: " + (host["have"].empty() ? "none" : host["have"]));
  if (!not_used.empty())
    r.facts.push_back("the remote cordon " + cordon + " is not used: " + not_used);
  return p;
}

}  // namespace cordon::ssh
