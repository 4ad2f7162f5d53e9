// The protected paths of a run, and the state roots made before it.
#include "own_state.hpp"

#include <sys/stat.h>
#include <cordon/config.hpp>
#include <cordon/jobs.hpp>
#include <cordon/private_dir.hpp>

#include <algorithm>
#include <cerrno>

namespace cordon::detail {

namespace fs = std::filesystem;

namespace {

void add(std::vector<fs::path>& out, const fs::path& p) {
  if (p.empty()) return;
  fs::path norm = fs::absolute(p).lexically_normal();
  if (!norm.has_filename() && norm.has_parent_path()) norm = norm.parent_path();  // "a/b/"
  if (std::find(out.begin(), out.end(), norm) == out.end()) out.push_back(norm);
}

void prepare(const fs::path& dir, const char* what, std::vector<std::string>& notes) {
  if (dir.empty()) return;
  try {
    PrivateDir::create(dir);
  } catch (const Error& e) {
    notes.push_back(std::string("cordon's ") + what + " could not be prepared (" + e.code() + ": " +
                    e.message() + "); the command is kept from it all the same");
  }
}

bool missing(const fs::path& p) {
  struct stat st {};
  return !p.empty() && ::lstat(p.c_str(), &st) != 0 && errno == ENOENT;
}

}  // namespace

fs::path cordon_root_of(const fs::path& dir) {
  fs::path norm = dir.lexically_normal();
  if (!norm.has_filename() && norm.has_parent_path()) norm = norm.parent_path();
  if (norm.parent_path().filename() == "cordon") return norm.parent_path();
  return norm;
}

std::vector<fs::path> own_state_paths(const Registry& registry, const std::vector<fs::path>& extra,
                                      std::vector<std::string>& notes) {
  std::vector<fs::path> out;
  fs::path jobs = default_job_state_dir(), backends = registry.state_dir();
  prepare(jobs, "job state directory", notes);
  prepare(backends, "backend state directory", notes);
  add(out, jobs.empty() ? fs::path() : cordon_root_of(jobs));
  add(out, backends.empty() ? fs::path() : cordon_root_of(backends));
  fs::path config = default_config_path().parent_path();
  if (config.is_absolute()) {
    // Not for "/.config/cordon" (no HOME): only root could make that, and it is no one's home.
    if (config.parent_path().parent_path() != "/" && missing(config))
      prepare(config, "configuration directory", notes);
    add(out, config);
  }
  for (const auto& dir : registry.search_path()) add(out, dir.path);
  for (const auto& p : extra) add(out, p);
  return out;
}

}  // namespace cordon::detail
