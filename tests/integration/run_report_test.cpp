// What `cordon run --json` and `cordon explain` report about a landlock run beyond its status:
// the memory limit's kill, the sandbox's resources, a workspace the command cannot write.
#include <unistd.h>

#include <boost/json.hpp>

#include <fstream>

#include "cli.hpp"

using namespace itest;
namespace json = boost::json;

namespace {

// A policy of the default's paths with a 64 MiB total (a cgroup's: root only on this host kind).
std::string memory_policy(Scratch& s) {
  std::string file = (s / "memory.toml").string();
  std::ofstream(file) << "version = 1\n[policy]\nname = \"memory-test\"\n[limits]\nmemory_mb = 64\n"
                         "timeout = \"60s\"\n";
  return file;
}

std::string plain_policy(Scratch& s) {
  std::string file = (s / "plain.toml").string();
  std::ofstream(file) << "version = 1\n[policy]\nname = \"plain\"\n";
  return file;
}

bool has_note(const json::object& o, const std::string& note) {
  for (const auto& n : o.at("notes").as_array())
    if (n.as_string() == note) return true;
  return false;
}

bool root_or_skip() {
  if (::geteuid() == 0) return true;
  WARN("skipped: this case is about cordon running as root");
  return false;
}

}  // namespace

TEST_CASE("run report: a run the memory limit kills says so, with the sandbox's resources",
          "[cli][landlock]") {
  Scratch s;
  std::string policy = memory_policy(s);
  auto probe = run_cli({"run", "--backend", "landlock", "--policy", policy, "--", "/bin/true"});
  if (probe.status == 125 && probe.err.find("limit.memory") != std::string::npos) {
    // Refused as it must be where no cgroup can be made (an unprivileged caller here).
    WARN("skipped: no memory total here: " << probe.err);
    return;
  }
  if (!landlock_usable(policy)) return;
  // tail keeps a line that never ends: /dev/zero has no newline.
  auto r = run_cli({"run", "--json", "--backend", "landlock", "--policy", policy, "--workspace",
                    s.dir.string(), "--", "tail", "-n", "1", "/dev/zero"});
  INFO(r.out << r.err);
  auto o = json::parse(r.out).as_object();
  CHECK(o.at("signal").as_int64() == 9);
  CHECK(has_note(o, "killed by the memory limit (limits.memory_mb = 64)"));
  auto& res = o.at("resources").as_object();
  REQUIRE(res.contains("peak_memory_bytes"));
  CHECK(res.at("peak_memory_bytes").to_number<std::uint64_t>() > 32ull << 20);
  CHECK(res.at("peak_memory_bytes").to_number<std::uint64_t>() <= 64ull << 20);
  CHECK(res.at("cpu_user_seconds").to_number<double>() >= 0);
  CHECK(res.at("cpu_system_seconds").to_number<double>() > 0);
  CHECK_FALSE(res.contains("processes_started"));  // no counter of them here
}

TEST_CASE("run report: a root-owned workspace the command cannot write is noted and explained",
          "[cli][landlock]") {
  if (!root_or_skip()) return;
  Scratch s;  // root's, mode 0755: nobody may read it, not write it
  std::string policy = plain_policy(s);
  if (!landlock_usable(policy)) return;
  const std::string note =
      "the command runs as uid 65534 and cannot write its workspace '" + s.dir.string() +
      "' (owner uid 0, gid 0, mode 0755): set backends.landlock.uid (and gid) to a user that "
      "may write it, or give the workspace to uid 65534";
  auto r = run_cli({"run", "--json", "--backend", "landlock", "--policy", policy, "--workspace",
                    s.dir.string(), "--", "touch", "made"});
  INFO(r.out << r.err);
  auto o = json::parse(r.out).as_object();
  CHECK(o.at("exit_code").as_int64() == 1);  // touch: permission denied
  CHECK(has_note(o, note));
  auto x = run_cli(
      {"explain", "--backend", "landlock", "--policy", policy, "--workspace", s.dir.string()});
  INFO(x.out << x.err);
  CHECK(x.status == 0);
  CHECK(x.out.find("warning: " + note + "\n") != std::string::npos);
  // A workspace nobody may write: nothing to say.
  std::filesystem::permissions(s.dir, std::filesystem::perms::others_write,
                               std::filesystem::perm_options::add);
  auto open = run_cli({"run", "--json", "--backend", "landlock", "--policy", policy, "--workspace",
                       s.dir.string(), "--", "touch", "made"});
  auto p = json::parse(open.out).as_object();
  CHECK(p.at("exit_code").as_int64() == 0);
  CHECK_FALSE(has_note(p, note));
  auto quiet = run_cli({"explain", "--json", "--backend", "landlock", "--policy", policy,
                        "--workspace", s.dir.string()});
  CHECK(json::parse(quiet.out).as_object().at("warnings").as_array().empty());
}
