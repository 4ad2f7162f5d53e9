// The default locations of cordon's state and configuration, for any environment.
#include <cordon/sdk/state_roots.hpp>

#include <unistd.h>
#include <cordon/sdk/path_guard.hpp>
#include <cordon/user_db.hpp>

#include <algorithm>
#include <cstdlib>
#include <string>

namespace cordon {

namespace fs = std::filesystem;

namespace {

bool in_proc(const std::string& path) { return path == "/proc" || path.starts_with("/proc/"); }

}  // namespace

fs::path env_dir(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v != '/') return {};
  fs::path p(v);
  for (const auto& part : p)
    if (part == "..") return {};
  if (in_proc(p.lexically_normal().string())) return {};
  // Nor by a symlink on the way (~/h -> /proc/self/cwd). One openat2 when there is none.
  ResolvedPath r = resolve_path(p.string(), LinkRule::outside_bases);
  if (in_proc(r.path)) return {};
  for (const auto& step : r.links)
    if (in_proc(step.path) || in_proc(step.target)) return {};
  return p;
}

StateEnv state_env() {
  StateEnv env;
  env.euid = ::geteuid();
  env.home = env_dir("HOME");
  env.xdg_state = env_dir("XDG_STATE_HOME");
  env.xdg_cache = env_dir("XDG_CACHE_HOME");
  env.xdg_config = env_dir("XDG_CONFIG_HOME");
  env.xdg_runtime = env_dir("XDG_RUNTIME_DIR");
  if (auto user = find_user(::getuid()); user && !user->home.empty()) env.user_home = user->home;
  return env;
}

StateEnv state_env_of(uid_t uid, const fs::path& home) {
  StateEnv env;
  env.euid = uid;
  env.home = home;
  env.user_home = home;
  return env;
}

std::vector<StateRoot> state_roots(const StateEnv& env) {
  std::vector<StateRoot> out;
  auto root = [&out](const fs::path& given, const fs::path& rest) {
    fs::path base = given.lexically_normal();
    if (!base.has_filename() && base.has_parent_path()) base = base.parent_path();  // "a/b/"
    if (!base.is_absolute() || base == base.root_path()) return;
    StateRoot r{base / rest / "cordon", base};
    bool seen = std::any_of(out.begin(), out.end(), [&r](const auto& o) { return o.dir == r.dir; });
    if (!seen) out.push_back(std::move(r));
  };
  std::vector<fs::path> homes{env.home, env.user_home};
  // Job state: XDG_STATE_HOME, else the home, else (root) /var/lib.
  root(env.xdg_state, "");
  for (const auto& h : homes) root(h, fs::path(".local") / "state");
  if (env.euid == 0) root("/var/lib", "");
  // Backend state: /run for root; else the runtime directory, else the cache.
  if (env.euid == 0) {
    root("/run", "");
  } else {
    root(env.xdg_runtime, "");
    root(fs::path("/run/user") / std::to_string(env.euid), "");
    root(env.xdg_cache, "");
    for (const auto& h : homes) root(h, ".cache");
  }
  // Configuration: XDG_CONFIG_HOME, else the home.
  root(env.xdg_config, "");
  for (const auto& h : homes) root(h, ".config");
  return out;
}

std::vector<fs::path> command_user_state(uid_t uid) {
  std::vector<fs::path> dirs;
  if (uid == ::geteuid()) return dirs;
  auto user = find_user(uid);
  fs::path home = user && !user->home.empty() ? fs::path(user->home) : fs::path();
  for (const auto& root : state_roots(state_env_of(uid, home))) dirs.push_back(root.dir);
  return dirs;
}

std::vector<fs::path> command_user_state_beyond(uid_t uid, const std::vector<fs::path>& kept) {
  std::vector<fs::path> more;
  for (auto& dir : command_user_state(uid))
    if (std::find(kept.begin(), kept.end(), dir) == kept.end() &&
        std::find(more.begin(), more.end(), dir) == more.end())
      more.push_back(std::move(dir));
  return more;
}

std::vector<fs::path> users_state_within(const fs::path& dir) {
  std::vector<fs::path> dirs;
  std::error_code ec;
  fs::path real = fs::weakly_canonical(dir, ec);
  fs::path base = (ec ? dir : real).lexically_normal();
  auto within = [&base](const fs::path& home) {
    auto rel = home.lexically_normal().lexically_relative(base);
    return !rel.empty() && *rel.begin() != "..";
  };
  for (const auto& user : local_users()) {
    if (user.uid == ::geteuid() || user.home.empty() || user.home.front() != '/') continue;
    fs::path home_real = fs::weakly_canonical(user.home, ec);
    if (!within(user.home) && (ec || !within(home_real))) continue;
    for (const auto& root : state_roots(state_env_of(user.uid, user.home)))
      dirs.push_back(root.dir);
  }
  return dirs;
}

}  // namespace cordon
