// The profiles cordon generates: golden files for every shipped preset and the escape-relevant
// clauses (a change is a reviewed diff), each well-formed with every path a parameter, and their
// decisions, by an evaluator of Seatbelt's rule order, checked against the policy both ways.
// CORDON_UPDATE_GOLDEN=1 rewrites the golden files instead of comparing.
#include <cordon/policy_loader.hpp>
#include <cordon/sdk/policy.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "profile.hpp"
#include "sbpl.hpp"
#include "seatbelt_backend.hpp"

using namespace cordon;
using namespace cordon::seatbelt;
using cordon::seatbelt::test::Verdict;

namespace {

const std::string kWorkspace = "/Users/dev/project";
const std::string kHome = "/Users/dev";

ProfileInput input_for(Policy policy) {
  policy = resolve_paths(std::move(policy), PathContext{kWorkspace, kHome});
  ProfileInput in;
  in.policy = policy;
  in.workspace = kWorkspace;
  in.home = policy.filesystem.home == HomeMode::host ? kHome : "/private/tmp/cordon-run/home";
  in.tmp = "/private/tmp/cordon-run/tmp";
  in.path_dirs = {"/usr/local/bin", "/usr/bin", "/bin"};
  in.protected_paths = {kHome + "/.local/state/cordon"};
  return in;
}

// A generated profile, parsed, with its parameters as a map.
struct Compiled {
  Profile profile;
  std::vector<test::SExpr> parsed;
  std::map<std::string, std::string> params;
  explicit Compiled(const ProfileInput& in) : profile(generate_profile(in)) {
    parsed = test::parse_sbpl(profile.text);
    params.insert(profile.params.begin(), profile.params.end());
  }
  bool allows(std::string_view op, std::string_view object) const {
    return test::evaluate(parsed, params, op, object) == Verdict::allow;
  }
};

std::string golden_text(const Profile& p) {
  std::string out;
  for (const auto& [name, value] : p.params) out += "; " + name + " = " + value + "\n";
  return out + p.text;
}

void check_golden(const std::string& name, const Profile& p) {
  std::string path = std::string(CORDON_SEATBELT_GOLDEN) + "/" + name + ".sb";
  if (std::getenv("CORDON_UPDATE_GOLDEN")) {
    std::ofstream(path) << golden_text(p);
    return;
  }
  std::ifstream in(path);
  INFO("golden file " << path << " (CORDON_UPDATE_GOLDEN=1 rewrites it)");
  REQUIRE(in);
  std::string want{std::istreambuf_iterator<char>(in), {}};
  CHECK(golden_text(p) == want);
}

Policy clause_policy(const std::string& name) {
  Policy p = load_preset("standard");
  if (name == "blocked-under-host-read") {
    p.filesystem.read_host = true;
    p.filesystem.blocked = {"~/.ssh", "{workspace}/secrets"};
  } else if (name == "allowed-commands") {
    p.process.allowed_commands = {"git", "/opt/tool/bin/make"};
  } else if (name == "no-subprocess") {
    p.process.allow_subprocess = false;
  } else if (name == "ports") {
    p.network.connect_ports = {443};
    p.network.bind_ports = {8080};
  } else if (name == "network") {
    p.network.allow = true;
  }
  return p;
}

const std::vector<std::string> kClauses = {"blocked-under-host-read", "allowed-commands",
                                           "no-subprocess", "ports", "network"};

}  // namespace

TEST_CASE("seatbelt profile: every shipped preset matches its golden file and is well-formed",
          "[seatbelt]") {
  for (const auto& name : preset_names()) {
    INFO("preset " << name);
    Compiled c(input_for(load_preset(name)));
    check_golden("preset-" + name, c.profile);
    CHECK(test::check_profile(c.parsed, c.params).empty());
  }
  for (const auto& name : kClauses) {
    INFO("clause " << name);
    Compiled c(input_for(clause_policy(name)));
    check_golden("clause-" + name, c.profile);
    CHECK(test::check_profile(c.parsed, c.params).empty());
  }
}

TEST_CASE("seatbelt profile: reads and writes follow the policy, both ways", "[seatbelt]") {
  Compiled c(input_for(load_preset("standard")));
  CHECK(c.allows("file-read-data", "/usr/bin/ls"));
  CHECK(c.allows("file-read-data", "/private/etc/hosts"));  // /etc is /private/etc on macOS
  CHECK(c.allows("file-read-data", kWorkspace + "/main.c"));
  CHECK_FALSE(c.allows("file-read-data", kHome + "/Documents/tax.pdf"));
  CHECK(c.allows("file-write-data", kWorkspace + "/out.o"));
  CHECK_FALSE(c.allows("file-write-data", "/usr/local/bin/evil"));
  CHECK_FALSE(c.allows("file-write-data", kHome + "/.zshrc"));
  CHECK(c.allows("file-write-create", "/private/tmp/cordon-run/tmp/x"));
  CHECK_FALSE(c.allows("file-write-create", "/private/tmp/other"));
  // cordon's own state, under no grant either way.
  CHECK_FALSE(c.allows("file-read-data", kHome + "/.local/state/cordon/jobs/1/spec.json"));
}

TEST_CASE("seatbelt profile: a blocked path under a readable tree stays unreadable", "[seatbelt]") {
  Compiled c(input_for(clause_policy("blocked-under-host-read")));
  CHECK(c.allows("file-read-data", kHome + "/notes.txt"));
  CHECK_FALSE(c.allows("file-read-data", kHome + "/.ssh/id_ed25519"));
  CHECK_FALSE(c.allows("file-read-metadata", kHome + "/.ssh/id_ed25519"));
  CHECK(c.allows("file-read-data", kWorkspace + "/src/a.c"));
  CHECK_FALSE(c.allows("file-read-data", kWorkspace + "/secrets/key"));
  CHECK_FALSE(c.allows("file-write-data", kWorkspace + "/secrets/key"));
  // Nor moved out of the way: the blocked directory and its writable ancestors are pinned.
  CHECK_FALSE(c.allows("file-write-unlink", kWorkspace + "/secrets"));
  CHECK_FALSE(c.allows("file-write-unlink", kWorkspace));
  CHECK(c.allows("file-write-unlink", kWorkspace + "/src/a.o"));
}

TEST_CASE("seatbelt profile: blocked programs, the allow-list and subprocesses", "[seatbelt]") {
  Compiled standard(input_for(load_preset("standard")));
  CHECK(standard.allows("process-exec", "/bin/ls"));
  for (const char* p : {"/usr/bin/sudo", "/usr/bin/su", "/opt/homebrew/bin/sudo"})
    CHECK_FALSE(standard.allows("process-exec", p));
  CHECK(standard.allows("process-fork", ""));
  Compiled listed(input_for(clause_policy("allowed-commands")));
  CHECK(listed.allows("process-exec", "/usr/bin/git"));
  CHECK(listed.allows("process-exec", "/opt/tool/bin/make"));
  CHECK_FALSE(listed.allows("process-exec", "/bin/sh"));
  Compiled alone(input_for(clause_policy("no-subprocess")));
  CHECK_FALSE(alone.allows("process-fork", ""));
}

TEST_CASE("seatbelt profile: network denied, allowed, or by port", "[seatbelt]") {
  Compiled none(input_for(load_preset("standard")));
  CHECK_FALSE(none.allows("network-outbound", "example.org:443"));
  CHECK_FALSE(none.allows("network-outbound", "localhost:8080"));
  Compiled ports(input_for(clause_policy("ports")));
  CHECK(ports.allows("network-outbound", "example.org:443"));
  CHECK_FALSE(ports.allows("network-outbound", "example.org:80"));
  CHECK(ports.allows("network-bind", "localhost:8080"));
  CHECK_FALSE(ports.allows("network-bind", "localhost:9090"));
  Compiled open(input_for(clause_policy("network")));
  CHECK(open.allows("network-outbound", "example.org:80"));
}

TEST_CASE("seatbelt profile: hostile paths stay parameters and cannot add rules", "[seatbelt]") {
  // Past the policy loader (which refuses control characters), straight into the generator.
  ProfileInput in = input_for(load_preset("standard"));
  std::string hostile = "/Users/dev/x\") (allow default) (\"\n\\\xff\xfe";
  in.policy.filesystem.blocked = {hostile};
  in.policy.filesystem.write = {"/Users/dev/w\")(allow file-write*)"};
  Compiled c(in);
  CHECK(c.profile.text.find("allow default") == std::string::npos);
  CHECK(c.profile.text.find("/Users/dev") == std::string::npos);
  CHECK(test::check_profile(c.parsed, c.params).empty());
  CHECK_FALSE(c.allows("file-read-data", hostile + "/f"));
  CHECK_FALSE(c.allows("file-write-data", "/usr/bin/x"));
}

TEST_CASE("seatbelt backend: here it proves nothing, says why, and compiles for review",
          "[seatbelt]") {
  SeatbeltBackend b(BackendContext{"seatbelt", nullptr, "/var/tmp"});
  const auto& probe = b.probe();
  CHECK_FALSE(probe.available);
  CHECK(probe.reason.rfind("macOS only", 0) == 0);
  for (const auto& proof : probe.proofs) CHECK_FALSE(proof.proven);
  Plan plan;
  plan.policy = resolve_paths(load_preset("standard"), PathContext{kWorkspace, kHome});
  plan.workspace = kWorkspace;
  plan.env = {{"PATH", "/usr/bin:/bin"}};
  auto text = b.compile(plan);
  REQUIRE(text);
  CHECK(text->find("(deny default)") != std::string::npos);
  auto argv = sandbox_exec_argv(generate_profile(profile_input(plan, "/private/tmp/r")),
                                "/private/tmp/r/profile.sb", {"ls"});
  CHECK(argv.front() == "/usr/bin/sandbox-exec");
  CHECK(argv[1] == "-f");
  CHECK(argv[2] == "/private/tmp/r/profile.sb");
  CHECK(argv[argv.size() - 2] == "--");
  CHECK(argv.back() == "ls");
}
