// cordon's seccomp profile: the JSON (evaluated here the way the runtime applies it) and, against
// the real daemon, a static probe that makes each denied call and its allowed neighbours.
#include <cordon/sdk/seccomp_denials.hpp>

#include <boost/json/serialize.hpp>

#include <seccomp.h>

#include <cerrno>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "seccomp_profile.hpp"
#include "support.hpp"

using namespace cordon;
using namespace cordon::docker;
using namespace cordon::docker::test;
namespace json = boost::json;

namespace {

// What the profile does with `call` and `args`: "allow", "errno N", or "default". Fails the
// test when two rules with different outcomes match (the runtime would not honour both).
std::string verdict(const json::object& profile, const std::string& call,
                    std::array<std::uint64_t, 6> args = {}) {
  std::set<std::string> outcomes;
  for (const auto& r : profile.at("syscalls").as_array()) {
    const auto& rule = r.as_object();
    bool named = false;
    for (const auto& n : rule.at("names").as_array()) named = named || n.as_string() == call;
    if (!named) continue;
    bool match = true;
    if (const auto* conds = rule.if_contains("args"))
      for (const auto& c : conds->as_array()) {
        const auto& o = c.as_object();
        auto a = args.at(o.at("index").to_number<std::size_t>());
        auto v = o.at("value").to_number<std::uint64_t>();
        std::string op(o.at("op").as_string());
        if (op == "SCMP_CMP_EQ") match = match && a == v;
        if (op == "SCMP_CMP_GT") match = match && a > v;
        if (op == "SCMP_CMP_MASKED_EQ")
          match = match && (a & v) == o.at("valueTwo").to_number<std::uint64_t>();
      }
    if (!match) continue;
    std::string action(rule.at("action").as_string());
    outcomes.insert(action == "SCMP_ACT_ALLOW"
                        ? "allow"
                        : "errno " + std::to_string(rule.at("errnoRet").to_number<int>()));
  }
  INFO(call);
  REQUIRE(outcomes.size() <= 1);
  return outcomes.empty() ? "default" : *outcomes.begin();
}

std::size_t known_calls(std::uint32_t arch) {
  std::size_t n = 0;
  for (int nr = 0; nr < 2048; ++nr)
    if (char* name = seccomp_syscall_resolve_num_arch(arch, nr)) {
      ++n;
      std::free(name);
    }
  return n;
}

const std::string kPerm = "errno " + std::to_string(EPERM);
const std::string kNoFamily = "errno " + std::to_string(EAFNOSUPPORT);

}  // namespace

TEST_CASE("seccomp: the daemon's architecture names the profile's, others are refused",
          "[unit][seccomp]") {
  CHECK(seccomp_arch("x86_64") == "SCMP_ARCH_X86_64");
  CHECK(seccomp_arch("amd64") == "SCMP_ARCH_X86_64");
  CHECK(seccomp_arch("aarch64") == "SCMP_ARCH_AARCH64");
  CHECK(seccomp_arch("arm64") == "SCMP_ARCH_AARCH64");
  try {
    seccomp_profile("ppc64le");
    FAIL("ppc64le was accepted");
  } catch (const Error& e) {
    CHECK(e.code() == "CRD1003");
    CHECK(std::string(e.what()).find("architecture 'ppc64le'") != std::string::npos);
  }
}

TEST_CASE("seccomp: complement masks match every value but the excluded ones", "[unit][seccomp]") {
  std::mt19937 rng(7);
  auto r32 = [&rng] { return static_cast<std::uint32_t>(rng()); };
  std::vector<std::vector<std::uint32_t>> sets = {
      {0x5412, 0x541c}, {0}, {0xffffffff}, {1, 2, 3}, {}};
  for (int i = 0; i < 5; ++i) sets.push_back({r32(), r32(), r32() & 0xffff});
  for (const auto& excluded : sets) {
    auto masks = complement_masks(excluded);
    auto matches = [&masks](std::uint32_t x) {
      int n = 0;
      for (auto [mask, value] : masks) n += (x & mask) == value;
      return n;
    };
    std::vector<std::uint32_t> probes(excluded);
    for (auto e : excluded)
      for (int d = -3; d <= 3; ++d) probes.push_back(e + static_cast<std::uint32_t>(d));
    for (int i = 0; i < 20000; ++i) probes.push_back(r32());
    for (std::uint32_t x = 0; x < 0x10000; ++x) probes.push_back(x);
    for (auto x : probes) {
      bool out = std::find(excluded.begin(), excluded.end(), x) != excluded.end();
      INFO(std::hex << x);
      REQUIRE(matches(x) == (out ? 0 : 1));  // exactly one rule: the rules never overlap
    }
  }
}

TEST_CASE("seccomp: the profile allows what libseccomp knows but cordon's denials",
          "[unit][seccomp]") {
  auto p = seccomp_profile("amd64");
  const auto& json = p->profile;
  CHECK(json.at("defaultAction") == "SCMP_ACT_ERRNO");
  CHECK(json.at("defaultErrnoRet") == EPERM);
  CHECK(json.at("architectures") == json::array{"SCMP_ARCH_X86_64"});
  CHECK(p->allowed + p->checked + p->denied == known_calls(SCMP_ARCH_X86_64));
  CHECK(p->checked == 4);
  CHECK(p->allowed > 250);
  for (auto call : {"read", "write", "execve", "fork", "vfork", "wait4", "getpid", "prctl",
                    "rt_sigaction", "mmap", "openat", "seccomp", "kill"})
    CHECK(verdict(json, call) == "allow");
  for (auto call : seccomp::kDeniedCalls) {
    std::string c(call);
    auto v = verdict(json, c);
    CHECK((v == kPerm || v == "default"));  // "default": this architecture lacks the call
  }
  CHECK(verdict(json, "ptrace") == kPerm);
  CHECK(verdict(json, "io_uring_setup") == kPerm);
  CHECK(verdict(json, "clone3") == "errno " + std::to_string(ENOSYS));
  CHECK(verdict(json, "clone", {0x11 /* SIGCHLD */}) == "allow");
  CHECK(verdict(json, "clone", {0x3d0f00 /* threads */}) == "allow");
  CHECK(verdict(json, "clone", {0x10000000 | 0x11 /* CLONE_NEWUSER */}) == "default");
  CHECK(verdict(json, "clone", {0x40000000 /* CLONE_NEWNET */}) == "default");
  CHECK(verdict(json, "ioctl", {0, 0x5412 /* TIOCSTI */}) == "default");
  CHECK(verdict(json, "ioctl", {0, 0x100005412ull}) == "default");
  CHECK(verdict(json, "ioctl", {0, 0x541c /* TIOCLINUX */}) == "default");
  for (std::uint64_t ok : {0x5401ull /* TCGETS */, 0x5413ull, 0x541bull, 0x541dull, 0xc0045877ull})
    CHECK(verdict(json, "ioctl", {0, ok}) == "allow");
  CHECK(verdict(json, "personality", {0xffffffff}) == "allow");
  CHECK(verdict(json, "personality", {0}) == "allow");
  CHECK(verdict(json, "personality", {0x0040000 /* ADDR_NO_RANDOMIZE */}) == "default");
  CHECK(verdict(json, "personality", {0x0400000 /* READ_IMPLIES_EXEC */}) == "default");
  for (std::uint64_t family : {1, 2, 10, 16}) CHECK(verdict(json, "socket", {family}) == "allow");
  for (std::uint64_t family : {0, 3, 17 /* AF_PACKET */, 40 /* AF_VSOCK */, 45, 46, 1000})
    CHECK(verdict(json, "socket", {family}) == kNoFamily);
  CHECK(p->security_opt().rfind("seccomp={\"defaultAction\"", 0) == 0);
  CHECK(p->summary().find(std::to_string(p->allowed) + " calls allowed") != std::string::npos);
}

TEST_CASE("seccomp: the aarch64 profile lists aarch64's calls", "[unit][seccomp]") {
  auto p = seccomp_profile("aarch64");
  CHECK(p->profile.at("architectures") == json::array{"SCMP_ARCH_AARCH64"});
  CHECK(p->allowed + p->checked + p->denied == known_calls(SCMP_ARCH_AARCH64));
  CHECK(verdict(p->profile, "fork") == "default");  // aarch64 has no fork: clone does it
  CHECK(verdict(p->profile, "clone", {0x11}) == "allow");
  CHECK(verdict(p->profile, "openat") == "allow");
}

namespace {

// The probe's lines as name -> outcome.
std::map<std::string, std::string> parse(const std::string& out) {
  std::map<std::string, std::string> m;
  std::istringstream in(out);
  for (std::string name, what; in >> name >> what;) m[name] = what;
  return m;
}

Plan probe_plan(const TempDir& ws) {
  write_file(ws / "seccomp-probe", read_file(CORDON_DOCKER_SECCOMP_PROBE), 0755);
  return make_plan(base_policy(ws.path()), ws.path(), {ws / "seccomp-probe"});
}

void check_probe(const std::map<std::string, std::string>& got) {
  std::map<std::string, std::string> want = {
      // Denied: the errno is cordon's profile's, not the kernel's or the daemon default's.
      {"ptrace", "EPERM"},
      {"mount", "EPERM"},
      {"unshare", "EPERM"},
      {"clone_newuser", "EPERM"},
      {"clone3", "ENOSYS"},
      {"keyctl", "EPERM"},
      {"bpf", "EPERM"},
      {"io_uring_setup", "EPERM"},
      {"ioctl_tiocsti", "EPERM"},
      {"ioctl_tiocsti_high", "EPERM"},
      {"ioctl_tioclinux", "EPERM"},
      {"socket_packet", "EAFNOSUPPORT"},
      {"socket_vsock", "EAFNOSUPPORT"},
      {"personality_norandom", "EPERM"},
      // Allowed neighbours reach the kernel (ENOTTY: a pipe is not a terminal).
      {"getpid", "ok"},
      {"fork", "ok"},
      {"clone", "ok"},
      {"ioctl_fionread", "ok"},
      {"ioctl_tiocgwinsz", "ENOTTY"},
      {"socket_unix", "ok"},
      {"socket_inet", "ok"},
      {"socket_netlink", "ok"},
      {"personality_query", "ok"}};
  for (const auto& [name, outcome] : want) {
    INFO(name);
    CHECK(got.count(name) == 1);
    if (got.count(name)) CHECK(got.at(name) == outcome);
  }
}

}  // namespace

TEST_CASE("seccomp: denied calls fail with cordon's errno, their neighbours work",
          "[docker][seccomp]") {
  if (!docker_ready()) return;
  TempDir ws;
  CaptureSink sink;
  auto r = backend().run(probe_plan(ws), sink);
  INFO(sink.out << sink.err << (r.error ? r.error->render() : ""));
  REQUIRE(r.exit_code == 0);
  check_probe(parse(sink.out));
  bool reported = false;
  for (const auto& e : r.report)
    reported = reported ||
               (e.capability == "sys.deny" && e.mechanism.find("seccomp profile (cordon's, ") == 0);
  CHECK(reported);
  // Ordinary programs under the daemon's init still work: busybox's shell, ls and cat.
  CaptureSink sh;
  auto ok = run_sh(base_policy(ws.path()), ws.path(),
                   "ls / >/dev/null && cat /etc/cordon-image && echo $(( 6 * 7 ))", sh);
  CHECK(ok.exit_code == 0);
  CHECK(sh.out == "the test image's own file\n42\n");
}

TEST_CASE("seccomp: a pooled container's waiter works under the profile, which binds the command",
          "[docker][seccomp][pool]") {
  if (!docker_ready()) return;
  TempDir ws;
  {
    DockerBackend b(BackendContext{"docker", nullptr, "/var/tmp/cordon-docker-test"});
    auto plan = probe_plan(ws);
    plan.settings["pool"] = 1;
    bool pooled = false;
    CaptureSink sink;
    RunResult r;
    for (int i = 0; i < 40 && !pooled; ++i) {
      sink = CaptureSink();
      r = b.run(plan, sink);
      for (const auto& n : r.notes) pooled = pooled || n == "ran in a warm pool container";
      if (!pooled) std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    REQUIRE(pooled);
    CHECK(r.exit_code == 0);
    check_probe(parse(sink.out));
  }
  CHECK(our_containers().empty());
}
