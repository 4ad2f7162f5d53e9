// resolve_paths: `~`, `{workspace}` and relative paths become absolute, lexically normal paths.
// Pure: no file is touched, so a path that does not exist yet still resolves.
#include <cordon/policy_loader.hpp>

#include "policy_diagnostics.hpp"
#include "policy_keys.hpp"

namespace cordon {

namespace {

namespace fs = std::filesystem;

// `rest` ("", "/x", "x/../y") under the absolute directory `base`, normalised.
std::string under(const fs::path& base, std::string_view rest) {
  return detail::normal_path(base.string() + "/" + std::string(rest));
}

std::optional<std::string> expand(const std::string& path, const PathContext& ctx,
                                  std::string& problem, std::map<std::string, std::string>& home) {
  if (auto bad = detail::path_problem(path)) {
    problem = *bad;
    return std::nullopt;
  }
  if (path == "~" || path.rfind("~/", 0) == 0) {
    if (!ctx.home.is_absolute()) {
      problem = "no home directory is known to expand '~'";
      return std::nullopt;
    }
    std::string expanded = under(ctx.home, std::string_view(path).substr(1));
    auto rel = fs::path(expanded).lexically_relative(under(ctx.home, "")).string();
    home[expanded] = rel == "." || rel.empty() ? "" : "/" + rel;
    return expanded;
  }
  constexpr std::string_view kWorkspace = "{workspace}";
  const bool from_workspace = path.rfind(kWorkspace, 0) == 0;
  if (!from_workspace && path[0] == '/') return detail::normal_path(path);
  if (!ctx.workspace.is_absolute()) {
    problem = "the workspace '" + ctx.workspace.string() + "' is not an absolute path";
    return std::nullopt;
  }
  if (from_workspace) return under(ctx.workspace, std::string_view(path).substr(kWorkspace.size()));
  return under(ctx.workspace, path);
}

void expand_list(std::vector<std::string>& paths, const char* key, Policy& policy,
                 const PathContext& ctx, detail::Diagnostics& diag) {
  const std::string dotted = std::string("filesystem.") + key;
  auto origin = policy.origins.find(dotted);
  for (auto& p : paths) {
    std::string problem;
    auto expanded = expand(p, ctx, problem, policy.filesystem.from_home);
    if (!expanded) {
      std::optional<Location> where;
      if (origin != policy.origins.end()) where = origin->second;
      diag.add(Error(code::kBadValue, "cannot expand '" + p + "' in '" + dotted + "': " + problem,
                     "write an absolute path, '~/...' or '{workspace}/...'", where));
      continue;
    }
    p = std::move(*expanded);
  }
}

// `path` re-expanded under `home` when it came from `~`, else nothing.
std::optional<std::string> rehomed(const Filesystem& f, const std::string& path,
                                   const fs::path& home) {
  auto it = f.from_home.find(path);
  if (it == f.from_home.end()) return std::nullopt;
  return under(home, it->second);
}

}  // namespace

Policy for_command_home(Policy policy, const fs::path& command_home) {
  auto& f = policy.filesystem;
  if (!command_home.is_absolute() || f.from_home.empty()) return policy;
  for (auto* grants : {&f.read, &f.write})
    for (auto& p : *grants)
      if (auto other = rehomed(f, p, command_home)) p = *other;
  std::vector<std::string> more;
  for (const auto& p : f.blocked)
    if (auto other = rehomed(f, p, command_home); other && *other != p) more.push_back(*other);
  f.blocked.insert(f.blocked.end(), more.begin(), more.end());
  return policy;
}

bool grants_write(const Policy& policy, const fs::path& dir) {
  if (policy.filesystem.write_host) return true;  // no write confinement asked for
  const std::string target = detail::normal_path(dir.string());
  for (const auto& grant : policy.filesystem.write) {
    if (grant.empty() || grant.front() != '/') continue;
    if (detail::path_within(target, detail::normal_path(grant))) return true;
  }
  return false;
}

std::string written_form(const Filesystem& f, const std::string& path) {
  auto it = f.from_home.find(path);
  return it == f.from_home.end() ? path : "~" + it->second;
}

Policy resolve_paths(Policy policy, const PathContext& ctx) {
  detail::Diagnostics diag;
  expand_list(policy.filesystem.read, "read", policy, ctx, diag);
  expand_list(policy.filesystem.write, "write", policy, ctx, diag);
  expand_list(policy.filesystem.blocked, "blocked", policy, ctx, diag);
  diag.throw_if_any();
  return policy;
}

}  // namespace cordon
