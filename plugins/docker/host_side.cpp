// Host facts for one run.
#include "host_side.hpp"

#include <cordon/path_guard.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

namespace cordon::docker {

namespace fs = std::filesystem;

std::string container_user(const Plan& plan, const Settings& settings) {
  if (!settings.user.empty()) return settings.user;
  struct stat st {};
  if (::stat(plan.workspace.c_str(), &st) == 0 && st.st_uid != 0)
    return std::to_string(st.st_uid) + ":" + std::to_string(st.st_gid);
  return "65534:65534";
}

std::vector<std::string> existing_write_paths(const Plan& plan, std::vector<std::string>& notes) {
  std::vector<std::string> out;
  if (plan.policy.filesystem.write_host) {
    notes.push_back("filesystem.write = \"host\": only the workspace is mounted from the host");
    return out;
  }
  std::vector<std::string> bases = plan.policy.filesystem.write;
  bases.push_back(plan.workspace.string());
  for (const auto& w : plan.policy.filesystem.write) {
    std::error_code ec;
    if (w.empty() || w.front() != '/') continue;
    // The daemon follows symlinks in a bind's source: one planted in the workspace must not
    // turn a write grant into a mount of its target.
    refuse_planted_symlink(fs::path(w).lexically_normal().string(), bases);
    if (fs::exists(w, ec))
      out.push_back(fs::weakly_canonical(w, ec).string());
    else
      notes.push_back("filesystem.write path '" + w + "' does not exist on the host: not mounted");
  }
  return out;
}

std::vector<BlockedPath> blocked_paths(const Plan& plan) {
  std::vector<BlockedPath> out;
  for (const auto& b : plan.policy.filesystem.blocked) {
    BlockedPath p{b, false, false};
    struct stat st {};
    if (!b.empty() && b.front() == '/' && ::lstat(b.c_str(), &st) == 0) {
      p.exists = true;
      p.directory = S_ISDIR(st.st_mode);
    }
    out.push_back(p);
  }
  return out;
}

std::pair<std::string, std::string> ensure_masks(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  std::string file = (dir / "docker-mask-file").string();
  std::string folder = (dir / "docker-mask-dir").string();
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0);
  if (fd >= 0) ::close(fd);
  if (::mkdir(folder.c_str(), 0) != 0 && errno != EEXIST)
    throw Error(code::kIsolationFailed,
                "cannot make the mask directory '" + folder + "': " + std::strerror(errno));
  struct stat fst {
  }, dst{};
  if (::lstat(file.c_str(), &fst) != 0 || !S_ISREG(fst.st_mode) || fst.st_size != 0 ||
      (fst.st_mode & 07777) != 0 || ::lstat(folder.c_str(), &dst) != 0 || !S_ISDIR(dst.st_mode) ||
      (dst.st_mode & 07777) != 0)
    throw Error(
        code::kIsolationFailed,
        "the masks under '" + dir.string() + "' are not an empty mode-000 file and directory",
        "remove them; cordon makes them again");
  return {file, folder};
}

std::string new_run_id() {
  std::random_device rd;
  std::uint64_t v = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace cordon::docker
