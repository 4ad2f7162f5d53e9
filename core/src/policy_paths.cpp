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
                                  std::string& problem) {
  if (auto bad = detail::path_problem(path)) {
    problem = *bad;
    return std::nullopt;
  }
  if (path == "~" || path.rfind("~/", 0) == 0) {
    if (!ctx.home.is_absolute()) {
      problem = "no home directory is known to expand '~'";
      return std::nullopt;
    }
    return under(ctx.home, std::string_view(path).substr(1));
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

void expand_list(std::vector<std::string>& paths, const char* key, const Policy& policy,
                 const PathContext& ctx, detail::Diagnostics& diag) {
  const std::string dotted = std::string("filesystem.") + key;
  auto origin = policy.origins.find(dotted);
  for (auto& p : paths) {
    std::string problem;
    auto expanded = expand(p, ctx, problem);
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

}  // namespace

Policy resolve_paths(Policy policy, const PathContext& ctx) {
  detail::Diagnostics diag;
  expand_list(policy.filesystem.read, "read", policy, ctx, diag);
  expand_list(policy.filesystem.write, "write", policy, ctx, diag);
  expand_list(policy.filesystem.blocked, "blocked", policy, ctx, diag);
  diag.throw_if_any();
  return policy;
}

}  // namespace cordon
