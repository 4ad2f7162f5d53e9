// The Landlock ruleset: planning (pure), creation (cordon), completion and enforcement (child).
#include "ruleset.hpp"

#include <cordon/sdk/error.hpp>

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "reductions.hpp"

namespace cordon::landlock {

namespace {

constexpr unsigned kCreateRulesetVersion = 1u << 0;
constexpr int kRulePathBeneath = 1;
constexpr int kRuleNetPort = 2;

struct RulesetAttr {
  std::uint64_t handled_access_fs;
  std::uint64_t handled_access_net;
  std::uint64_t scoped;
};

struct __attribute__((packed)) PathBeneathAttr {
  std::uint64_t allowed_access;
  std::int32_t parent_fd;
};

struct NetPortAttr {
  std::uint64_t allowed_access;
  std::uint64_t port;
};

std::uint64_t read_rights() { return right::read_file | right::read_dir; }

std::uint64_t write_rights(int abi) {
  return (right::write_file | right::remove_dir | right::remove_file | right::make_char |
          right::make_dir | right::make_reg | right::make_sock | right::make_fifo |
          right::make_block | right::make_sym | right::refer | right::truncate | right::ioctl_dev) &
         handled_fs_rights(abi);
}

void add_rule(std::vector<PathRule>& rules, const std::string& path, std::uint64_t access,
              bool dir) {
  if (!dir) access &= right::file_only;
  if (access == 0) return;
  for (auto& r : rules)
    if (r.path == path) {
      r.access |= access;
      return;
    }
  rules.push_back({path, access});
}

void plan_ports(const Network& net, RulesetPlan& plan) {
  auto add = [&plan](std::uint16_t port, std::uint64_t access) {
    for (auto& p : plan.ports)
      if (p.first == port) {
        p.second |= access;
        return;
      }
    plan.ports.emplace_back(port, access);
  };
  for (auto port : net.connect_ports) add(port, right::net_connect_tcp);
  for (auto port : net.bind_ports) add(port, right::net_bind_tcp);
}

}  // namespace

int landlock_abi() noexcept {
  long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
  if (abi < 1) return -errno;
  // The test knob lowers what every user of the ABI sees; it never raises it.
  int ceiling = landlock_abi_ceiling();
  if (ceiling == 0) return -ENOSYS;
  return ceiling > 0 && ceiling < abi ? ceiling : static_cast<int>(abi);
}

std::uint64_t handled_fs_rights(int abi) {
  if (abi < 1) return 0;
  std::uint64_t all = (right::make_sym << 1) - 1;  // ABI 1: bits 0-12
  if (abi >= 2) all |= right::refer;
  if (abi >= 3) all |= right::truncate;
  if (abi >= 5) all |= right::ioctl_dev;
  return all;
}

RulesetPlan plan_ruleset(int abi, const HostView& view, const Layout& layout, const Network& net,
                         bool exec_confined) {
  RulesetPlan plan;
  plan.abi = abi;
  plan.handled_fs = handled_fs_rights(abi);
  if (!net.allow && (!net.connect_ports.empty() || !net.bind_ports.empty())) {
    if (abi < 4)
      throw Error(
          code::kIsolationFailed,
          "landlock: TCP port rules need Landlock ABI 4, this kernel has " + std::to_string(abi),
          "remove network.connect_ports / bind_ports or use a kernel >= 6.7");
    plan.handled_net = right::net_bind_tcp | right::net_connect_tcp;
    plan_ports(net, plan);
  }
  if (abi >= 6) plan.scoped = right::scope_abstract_unix | right::scope_signal;
  const std::uint64_t exec = exec_confined ? 0 : right::execute;
  const std::uint64_t rw = read_rights() | write_rights(abi) | exec;
  for (const auto& p : view.read) add_rule(plan.host, p.path, read_rights() | exec, p.dir);
  for (const auto& p : view.write) add_rule(plan.host, p.path, rw, p.dir);
  add_rule(plan.host, view.workspace.path, view.workspace_writable ? rw : read_rights() | exec,
           true);
  for (const auto& f : view.allowed_exec)
    add_rule(plan.host, f, right::execute | right::read_file, false);
  const std::uint64_t device =
      (right::read_file | right::write_file | right::truncate | right::ioctl_dev) & plan.handled_fs;
  for (const auto& d : layout.devices) add_rule(plan.host, "/dev/" + d, device, false);

  add_rule(plan.sandbox, "/", layout.read_host ? read_rights() | exec : right::read_dir, true);
  if (layout.private_tmp) add_rule(plan.sandbox, "/tmp", rw, true);
  if (layout.home_kind != HomeKind::host) add_rule(plan.sandbox, layout.home, rw, true);
  add_rule(plan.sandbox, "/dev", right::read_dir, true);
  add_rule(plan.sandbox, "/dev/shm", read_rights() | write_rights(abi), true);
  add_rule(plan.sandbox, "/proc", read_rights(), true);
  return plan;
}

UniqueFd create_ruleset(const RulesetPlan& plan) {
  RulesetAttr attr{plan.handled_fs, plan.handled_net, plan.scoped};
  std::size_t size = plan.abi >= 6 ? sizeof attr : plan.abi >= 4 ? 16 : 8;
  UniqueFd ruleset(static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, size, 0)));
  if (!ruleset)
    throw Error(code::kIsolationFailed,
                std::string("landlock: cannot create a ruleset: ") + std::strerror(errno));
  for (const auto& rule : plan.host) {
    UniqueFd target(::open(rule.path.c_str(), O_PATH | O_CLOEXEC));
    if (!target) {
      if (errno == ENOENT && rule.path.rfind("/dev/", 0) == 0) continue;  // e.g. no /dev/tty
      throw Error(code::kIsolationFailed,
                  "landlock: cannot open '" + rule.path + "' for a rule: " + std::strerror(errno));
    }
    PathBeneathAttr pb{rule.access, target.get()};
    if (::syscall(SYS_landlock_add_rule, ruleset.get(), kRulePathBeneath, &pb, 0) != 0)
      throw Error(code::kIsolationFailed,
                  "landlock: cannot add the rule for '" + rule.path + "': " + std::strerror(errno));
  }
  for (const auto& [port, access] : plan.ports) {
    NetPortAttr np{access, port};
    if (::syscall(SYS_landlock_add_rule, ruleset.get(), kRuleNetPort, &np, 0) != 0)
      throw Error(code::kIsolationFailed, "landlock: cannot add the rule for TCP port " +
                                              std::to_string(port) + ": " + std::strerror(errno));
  }
  return ruleset;
}

int add_sandbox_rules(int ruleset_fd, const RulesetPlan& plan, const char** failed) noexcept {
  for (const auto& rule : plan.sandbox) {
    int target = ::open(rule.path.c_str(), O_PATH | O_CLOEXEC);
    if (target < 0) {
      *failed = rule.path.c_str();
      return -errno;
    }
    PathBeneathAttr pb{rule.access, target};
    long rc = ::syscall(SYS_landlock_add_rule, ruleset_fd, kRulePathBeneath, &pb, 0);
    int err = errno;
    ::close(target);
    if (rc != 0) {
      *failed = rule.path.c_str();
      return -err;
    }
  }
  return 0;
}

int restrict_self(int ruleset_fd) noexcept {
  return ::syscall(SYS_landlock_restrict_self, ruleset_fd, 0) == 0 ? 0 : -errno;
}

}  // namespace cordon::landlock
