// Landlock: the ruleset of a run (filesystem rights, TCP ports, scopes), planned purely, built
// by cordon for host paths and completed by the command's process for the sandbox's own
// directories.
#pragma once

#include <cordon/sdk/policy.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fd.hpp"
#include "host_paths.hpp"
#include "layout.hpp"

namespace cordon::landlock {

/// Landlock rights and scopes (the uapi values of linux/landlock.h).
namespace right {
inline constexpr std::uint64_t execute = 1ull << 0;
inline constexpr std::uint64_t write_file = 1ull << 1;
inline constexpr std::uint64_t read_file = 1ull << 2;
inline constexpr std::uint64_t read_dir = 1ull << 3;
inline constexpr std::uint64_t remove_dir = 1ull << 4;
inline constexpr std::uint64_t remove_file = 1ull << 5;
inline constexpr std::uint64_t make_char = 1ull << 6;
inline constexpr std::uint64_t make_dir = 1ull << 7;
inline constexpr std::uint64_t make_reg = 1ull << 8;
inline constexpr std::uint64_t make_sock = 1ull << 9;
inline constexpr std::uint64_t make_fifo = 1ull << 10;
inline constexpr std::uint64_t make_block = 1ull << 11;
inline constexpr std::uint64_t make_sym = 1ull << 12;
inline constexpr std::uint64_t refer = 1ull << 13;      // ABI 2
inline constexpr std::uint64_t truncate = 1ull << 14;   // ABI 3
inline constexpr std::uint64_t ioctl_dev = 1ull << 15;  // ABI 5
/// Rights a rule on a regular file (or device) may carry.
inline constexpr std::uint64_t file_only = execute | write_file | read_file | truncate | ioctl_dev;
inline constexpr std::uint64_t net_bind_tcp = 1ull << 0;         // ABI 4
inline constexpr std::uint64_t net_connect_tcp = 1ull << 1;      // ABI 4
inline constexpr std::uint64_t scope_abstract_unix = 1ull << 0;  // ABI 6
inline constexpr std::uint64_t scope_signal = 1ull << 1;         // ABI 6
}  // namespace right

/// The Landlock ABI of the running kernel (>= 1), or -errno (ENOSYS: not built in;
/// EOPNOTSUPP: disabled at boot). Never above CORDON_LANDLOCK_MAX_ABI (reductions.hpp): with
/// that knob at N the answer is min(kernel's ABI, N), and -ENOSYS for a value that is no ABI.
int landlock_abi() noexcept;

/// Every filesystem right the ABI knows (all are handled, so all are denied unless granted).
std::uint64_t handled_fs_rights(int abi);

/// One rule: rights beneath `path` (or on the file `path`).
struct PathRule {
  std::string path;
  std::uint64_t access = 0;
  bool operator==(const PathRule&) const = default;
};

/// The ruleset of one run.
struct RulesetPlan {
  int abi = 0;
  std::uint64_t handled_fs = 0;
  std::uint64_t handled_net = 0;  ///< non-zero only when TCP ports are listed
  std::uint64_t scoped = 0;
  std::vector<PathRule> host;     ///< host paths, opened by cordon before the clone
  std::vector<PathRule> sandbox;  ///< the sandbox's own directories, opened in it
  std::vector<std::pair<std::uint16_t, std::uint64_t>> ports;  ///< port, rights
};

/// Plans the ruleset. `exec_confined`: process.allowed_commands is non-empty, so EXECUTE is
/// granted only on those programs. Throws cordon::Error (CRD1003) when TCP ports are listed
/// and the ABI has no network rules (< 4).
RulesetPlan plan_ruleset(int abi, const HostView& view, const Layout& layout, const Network& net,
                         bool exec_confined);

/// Creates the ruleset and adds the host rules. Throws cordon::Error (CRD1003).
UniqueFd create_ruleset(const RulesetPlan& plan);

/// Child side: adds the sandbox rules. Returns 0, or -errno with `failed` set to the path.
int add_sandbox_rules(int ruleset_fd, const RulesetPlan& plan, const char** failed) noexcept;

/// Child side: enforces the ruleset on the calling thread (no_new_privs must be set).
int restrict_self(int ruleset_fd) noexcept;

}  // namespace cordon::landlock
