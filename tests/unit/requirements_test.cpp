// Tests of derive_requirements: each policy clause maps to its capability, and only then.
#include <catch2/catch.hpp>
#include <cordon/sdk/capabilities.hpp>
#include <cordon/sdk/requirements.hpp>

using namespace cordon;

namespace {

// A policy that asks for as little as the format allows.
Policy open_policy() {
  Policy p;
  p.filesystem.read_host = true;
  p.filesystem.home = HomeMode::host;
  p.network.allow = true;
  return p;
}

std::vector<std::string> ids(const Requirements& r) {
  std::vector<std::string> out;
  for (const auto& x : r) out.push_back(x.id);
  return out;
}

bool has(const Policy& p, std::string_view id) {
  return requires_capability(derive_requirements(p), id);
}

}  // namespace

TEST_CASE("requirements: the least a policy can ask for", "[requirements]") {
  CHECK(ids(derive_requirements(open_policy())) ==
        std::vector<std::string>{"env.grant", "fs.write.confine", "identity.unprivileged"});
}

TEST_CASE("requirements: defaults confine reads, deny network, keep home private",
          "[requirements]") {
  Policy p;
  for (auto id : {cap::fs_read_confine, cap::fs_write_confine, cap::net_deny, cap::ipc_isolate,
                  cap::proc_isolate, cap::home_private, cap::env_grant})
    CHECK(has(p, id));
  CHECK_FALSE(has(p, cap::net_ports));
  CHECK_FALSE(has(p, cap::limit_memory));
}

TEST_CASE("requirements: filesystem clauses", "[requirements]") {
  auto p = open_policy();
  CHECK_FALSE(has(p, cap::fs_read_confine));
  CHECK_FALSE(has(p, cap::proc_isolate));
  p.filesystem.read_host = false;
  CHECK(has(p, cap::fs_read_confine));
  CHECK(has(p, cap::proc_isolate));
  CHECK_FALSE(has(p, cap::fs_read_block));
  p.filesystem.blocked = {"/etc/shadow"};
  CHECK(has(p, cap::fs_read_block));
  CHECK_FALSE(has(p, cap::home_private));
  p.filesystem.home = HomeMode::private_home;
  CHECK(has(p, cap::home_private));
}

TEST_CASE("requirements: network clauses", "[requirements]") {
  auto p = open_policy();
  CHECK_FALSE(has(p, cap::net_deny));
  CHECK_FALSE(has(p, cap::ipc_isolate));
  p.network.allow = false;
  CHECK(has(p, cap::net_deny));
  CHECK(has(p, cap::ipc_isolate));
  p.network.connect_ports = {443};
  CHECK(has(p, cap::net_ports));
  CHECK_FALSE(has(p, cap::net_deny));
  auto reqs = derive_requirements(p);
  auto it = std::find_if(reqs.begin(), reqs.end(), [](auto& r) { return r.id == "net.ports"; });
  REQUIRE(it != reqs.end());
  CHECK(it->clause == "network.connect_ports");
}

TEST_CASE("requirements: each limit maps to its capability", "[requirements]") {
  struct Case {
    void (*set)(Limits&);
    std::string_view id;
  };
  Case cases[] = {
      {[](Limits& l) { l.memory_mb = 64; }, cap::limit_memory},
      {[](Limits& l) { l.max_processes = 8; }, cap::limit_processes},
      {[](Limits& l) { l.max_open_files = 32; }, cap::limit_files},
      {[](Limits& l) { l.cpu_seconds = 5; }, cap::limit_cpu},
      {[](Limits& l) { l.cpu_percent = 50; }, cap::limit_cpu_share},
      {[](Limits& l) { l.max_file_size_mb = 1; }, cap::limit_file_size},
      {[](Limits& l) { l.timeout = Duration(1500); }, cap::limit_timeout},
  };
  for (const auto& c : cases) {
    auto p = open_policy();
    CHECK_FALSE(has(p, c.id));
    c.set(p.limits);
    INFO(c.id);
    CHECK(has(p, c.id));
    CHECK(derive_requirements(p).size() == 4);
  }
}

TEST_CASE("requirements: process clauses", "[requirements]") {
  auto p = open_policy();
  p.process.blocked_commands = {"sudo"};
  CHECK(has(p, cap::fs_exec_block));
  CHECK_FALSE(has(p, cap::fs_exec_confine));
  p.process.allowed_commands = {"git", "make"};
  CHECK(has(p, cap::fs_exec_confine));
  CHECK_FALSE(has(p, cap::proc_no_subprocess));
  p.process.allow_subprocess = false;
  CHECK(has(p, cap::proc_no_subprocess));
}

TEST_CASE("requirements: sorted, unique, each with its clause", "[requirements]") {
  Policy p;
  p.limits.memory_mb = 512;
  auto reqs = derive_requirements(p);
  CHECK(std::is_sorted(reqs.begin(), reqs.end(), [](auto& a, auto& b) { return a.id < b.id; }));
  for (std::size_t i = 1; i < reqs.size(); ++i) CHECK(reqs[i - 1].id != reqs[i].id);
  for (const auto& r : reqs) CHECK_FALSE(r.clause.empty());
  auto mem = std::find_if(reqs.begin(), reqs.end(), [](auto& r) { return r.id == "limit.memory"; });
  REQUIRE(mem != reqs.end());
  CHECK(mem->clause == "limits.memory_mb = 512");
}

TEST_CASE("requirements: write = \"host\" asks for no write confinement", "[requirements]") {
  auto p = open_policy();
  CHECK(has(p, cap::fs_write_confine));
  p.filesystem.write_host = true;
  CHECK_FALSE(has(p, cap::fs_write_confine));
  CHECK(ids(derive_requirements(p)) ==
        std::vector<std::string>{"env.grant", "identity.unprivileged"});
}
