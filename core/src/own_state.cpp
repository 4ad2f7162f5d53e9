// The protected paths of a run, and the state roots made before it.
#include "own_state.hpp"

#include <sys/stat.h>
#include <unistd.h>
#include <cordon/config.hpp>
#include <cordon/jobs.hpp>
#include <cordon/sdk/private_dir.hpp>
#include <cordon/user_db.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

namespace cordon::detail {

namespace fs = std::filesystem;

namespace {

void add(std::vector<fs::path>& out, const fs::path& p) {
  if (p.empty()) return;
  fs::path norm = fs::absolute(p).lexically_normal();
  if (!norm.has_filename() && norm.has_parent_path()) norm = norm.parent_path();  // "a/b/"
  if (std::find(out.begin(), out.end(), norm) == out.end()) out.push_back(norm);
}

bool missing(const fs::path& p) {
  struct stat st {};
  return !p.empty() && ::lstat(p.c_str(), &st) != 0 && errno == ENOENT;
}

// The home or base directory `dir` lies in (HOME, an XDG base, /var/lib, /run), or empty when
// it lies in none (a directory the caller chose). cordon makes its own directories under it,
// never the base itself: HOME=/nonexistent must not make /nonexistent.
fs::path base_of(const fs::path& dir) {
  fs::path best;
  auto consider = [&](const fs::path& base) {
    if (base.empty() || !base.is_absolute()) return;
    auto rel = dir.lexically_relative(base.lexically_normal());
    if (!rel.empty() && *rel.begin() != ".." && base.string().size() > best.string().size())
      best = base.lexically_normal();
  };
  for (const char* name :
       {"HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME"})
    consider(env_dir(name));
  consider("/var/lib");
  consider("/run");
  return best;
}

// Makes a missing `dir` cordon's own unless its base is missing (or, with `based`, unknown).
void prepare(const fs::path& dir, bool based, const char* what, std::vector<std::string>& notes) {
  // An existing one is checked where it is used; here it only has to exist, and be masked.
  if (!missing(dir)) return;
  fs::path base = base_of(dir);
  if (dir.empty() || (based && base.empty()) || missing(base)) return;
  try {
    PrivateDir::create(dir);
  } catch (const Error& e) {
    notes.push_back(std::string("cordon's ") + what + " could not be prepared (" + e.code() + ": " +
                    e.message() + "); the command is kept from it all the same");
  }
}

}  // namespace

fs::path cordon_root_of(const fs::path& dir) {
  fs::path norm = dir.lexically_normal();
  if (!norm.has_filename() && norm.has_parent_path()) norm = norm.parent_path();
  if (norm.parent_path().filename() == "cordon") return norm.parent_path();
  return norm;
}

std::vector<fs::path> own_state_paths(const Registry& registry, const Policy& policy,
                                      const std::vector<fs::path>& extra,
                                      std::vector<std::string>& notes) {
  std::vector<fs::path> out;
  fs::path jobs = default_job_state_dir(), backends = registry.state_dir();
  prepare(jobs, true, "job state directory", notes);
  prepare(backends, false, "backend state directory", notes);
  add(out, jobs.empty() ? fs::path() : cordon_root_of(jobs));
  add(out, backends.empty() ? fs::path() : cordon_root_of(backends));
  fs::path config = default_config_path().parent_path();
  if (config.is_absolute()) {
    if (missing(config)) prepare(config, true, "configuration directory", notes);
    add(out, config);
  }
  // Where a cordon of this user would keep them under another HOME or XDG variable, or none:
  // what a command planted there would steer a later cordon run from a cron job or a login
  // shell. Made as the ones in use are; one that cannot be made is still passed on, and a
  // backend refuses the run when its command could make it.
  for (const auto& r : state_roots(state_env())) {
    if (missing(r.dir) && !missing(r.base) && !r.base.empty()) {
      try {
        PrivateDir::create(r.dir);
      } catch (const Error&) {  // not ours to make: the backend's check decides
      }
    }
    add(out, r.dir);
  }
  for (const auto& dir : registry.search_path()) add(out, dir.path);
  // A command that could rewrite its policy file would loosen every later run under it.
  for (const auto& f : policy.files) add(out, f);
  for (const auto& p : extra) add(out, p);
  return out;
}

}  // namespace cordon::detail
