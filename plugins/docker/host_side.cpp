// Host facts for one run.
#include "host_side.hpp"

#include <cordon/sdk/identity.hpp>
#include <cordon/sdk/path_guard.hpp>
#include <cordon/sdk/state_roots.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>

namespace cordon::docker {

namespace fs = std::filesystem;

std::string container_user(const Settings& settings, const SourceIdentity& workspace) {
  if (!settings.user.empty()) return settings.user;
  // The SDK's rule as for a root cordon, whoever runs cordon: the container's root is never
  // the command's. The image's user database is not the host's, so no primary group is
  // looked up: a workspace of uid 1000 and group root runs as 1000:65534.
  sdk::CommandUserInput in;
  in.workspace_uid = workspace.uid;
  in.workspace_gid = workspace.gid;
  sdk::CommandUser who = sdk::choose_command_user(in);
  return std::to_string(who.uid) + ":" + std::to_string(who.gid);
}

Plan with_command_user_state(const Plan& plan, const Settings& settings,
                             const SourceIdentity& workspace, std::optional<uid_t> named_uid) {
  std::string user = container_user(settings, workspace);
  std::string uid = user.substr(0, user.find(':'));
  std::optional<uid_t> host_uid = named_uid;
  if (!host_uid && !uid.empty() && uid.size() <= 10 &&
      std::all_of(uid.begin(), uid.end(), ::isdigit) && std::stoull(uid) < 0xffffffffULL)
    host_uid = static_cast<uid_t>(std::stoull(uid));
  if (!host_uid) return plan;
  auto more = command_user_state_beyond(*host_uid, plan.protected_paths);
  if (more.empty()) return plan;
  Plan out = plan;
  for (auto& dir : more) out.protected_paths.push_back(std::move(dir));
  return out;
}

std::vector<std::string> existing_write_paths(const Plan& plan, std::vector<std::string>& notes,
                                              SourceIdentities& held) {
  std::vector<std::string> out;
  if (plan.policy.filesystem.write_host) {
    notes.push_back("filesystem.write = \"host\": only the workspace is mounted from the host");
    return out;
  }
  std::vector<std::string> bases = plan.policy.filesystem.write;
  bases.push_back(plan.workspace.string());
  for (const auto& w : plan.policy.filesystem.write) {
    if (w.empty() || w.front() != '/') continue;
    std::string path = fs::path(w).lexically_normal().string();
    if (path.size() > 1 && path.back() == '/') path.pop_back();
    // The daemon follows symlinks in a bind's source: one planted in the workspace must not
    // turn a write grant into a mount of its target (the specific message first).
    refuse_planted_symlink(path, bases);
    if (!held.count(path)) {
      auto id = existing_source_identity({path, "filesystem.write path"});
      if (!id) {
        notes.push_back("filesystem.write path '" + w +
                        "' does not exist on the host: not mounted");
        continue;
      }
      held.emplace(path, std::move(*id));
    }
    out.push_back(path);
  }
  return out;
}

namespace {

// Where the command could write on the host: where a planted hard link would be.
std::vector<std::string> writable_dirs(const Plan& plan) {
  std::vector<std::string> out{plan.workspace.lexically_normal().string()};
  for (const auto& w : plan.policy.filesystem.write)
    if (!w.empty() && w.front() == '/') out.push_back(fs::path(w).lexically_normal().string());
  if (plan.policy.filesystem.home == HomeMode::host && !plan.host_home.empty())
    out.push_back(plan.host_home.lexically_normal().string());
  for (auto& d : out)
    while (d.size() > 1 && d.back() == '/') d.pop_back();
  return out;
}

// Throws CRD4004 when the masked `path` passes through a symlink the command could replace (in
// one of the `writable` directories): the mask would be bound to whatever the link names when
// the container starts. Refused here, on the host, with the link named.
void refuse_masked_link(MaskedKind kind, const std::string& path,
                        const std::vector<std::string>& writable) {
  if (path.empty() || path.front() != '/') return;
  ResolvedPath r = resolve_path(path, LinkRule::outside_bases, writable);
  if (r.refused) throw masked_link_refusal(code::kPathEscape, kind, path, *r.refused);
}

}  // namespace

std::vector<BlockedPath> blocked_paths(const Plan& plan, std::vector<std::string>& notes) {
  std::vector<BlockedPath> out;
  std::vector<std::string> writable = writable_dirs(plan);
  for (const auto& b : plan.policy.filesystem.blocked) {
    refuse_masked_link(MaskedKind::blocked, b, writable);
    BlockedPath p{b, false, false};
    struct stat st {};
    if (!b.empty() && b.front() == '/' && ::lstat(b.c_str(), &st) == 0) {
      p.exists = true;
      p.directory = S_ISDIR(st.st_mode);
    }
    out.push_back(p);
    // A file's other names (hard links) are masked wherever a mount shows them.
    if (!p.exists) continue;
    OtherNames others = other_names_to_mask(b, writable);
    for (auto& name : others.names) out.push_back({name, true, false});
    if (!others.walked_all) notes.push_back(unwalked_note(b));
  }
  return out;
}

std::vector<BlockedPath> own_state(const Plan& plan) {
  std::vector<BlockedPath> out;
  std::vector<std::string> writable = writable_dirs(plan);
  auto add = [&out](const std::string& path) {
    struct stat st {};
    if (path.empty() || path.front() != '/' || ::lstat(path.c_str(), &st) != 0) return;
    for (const auto& b : out)
      if (b.path == path) return;
    out.push_back({path, true, S_ISDIR(st.st_mode)});
  };
  for (const auto& p : plan.protected_paths) {
    std::string path = p.lexically_normal().string();
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    refuse_masked_link(MaskedKind::own_state, path, writable);
    add(path);
    std::error_code ec;
    auto real = fs::weakly_canonical(path, ec);
    if (!ec) add(real.string());
  }
  return out;
}

std::vector<std::string> paths_of(const std::vector<BlockedPath>& paths) {
  std::vector<std::string> out;
  for (const auto& p : paths) out.push_back(p.path);
  return out;
}

void refuse_missing_state(const Plan& plan, const std::vector<HostMount>& mounts) {
  for (const auto& p : plan.protected_paths) {
    std::string path = p.lexically_normal().string();
    std::error_code ec;
    if (path.empty() || fs::symlink_status(path, ec).type() != fs::file_type::not_found) continue;
    // ~/.config -> ~/dots/config: made through the link, inside a mount of ~/dots.
    std::string real = fs::weakly_canonical(path, ec).string();
    for (const auto& m : mounts) {
      std::string prefix = m.source == "/" ? "/" : m.source + "/";
      if (!m.writable || (path.rfind(prefix, 0) != 0 && real.rfind(prefix, 0) != 0)) continue;
      throw Error(code::kIsolationFailed,
                  "cordon's own state '" + path + "' does not exist, and the command could " +
                      "create it in the writable mount '" + m.source +
                      "' for a later cordon to trust",
                  "create it (mode 0700, as the user it belongs to), or keep the command's " +
                      std::string("write grants away from it"));
    }
  }
}

namespace {

[[noreturn]] void bad_mask(const PrivateDir& dir, const char* name, const std::string& why) {
  throw Error(code::kIsolationFailed, "the mask '" + (dir.path() / name).string() + "' " + why,
              "remove it; cordon makes it again");
}

}  // namespace

Masks ensure_masks(const PrivateDir& dir) {
  constexpr const char* kFile = "docker-mask-file";
  constexpr const char* kDir = "docker-mask-dir";
  int made = ::openat(dir.fd(), kFile, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0);
  if (made >= 0) ::close(made);
  if (::mkdirat(dir.fd(), kDir, 0) != 0 && errno != EEXIST)
    bad_mask(dir, kDir, std::string("cannot be made: ") + std::strerror(errno));
  // O_PATH: a mode-000 file or directory cannot be opened for reading by a cordon not root.
  int file = ::openat(dir.fd(), kFile, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (file < 0) bad_mask(dir, kFile, std::string("cannot be opened: ") + std::strerror(errno));
  Masks m{identity_of_fd(file, (dir.path() / kFile).string()), {}};
  int folder = ::openat(dir.fd(), kDir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (folder < 0) bad_mask(dir, kDir, std::string("cannot be opened: ") + std::strerror(errno));
  m.dir = identity_of_fd(folder, (dir.path() / kDir).string());
  struct stat fst {
  }, dst{};
  if (::fstat(m.file.held->fd(), &fst) != 0 || !S_ISREG(fst.st_mode) || fst.st_size != 0 ||
      (fst.st_mode & 07777) != 0 || fst.st_uid != ::geteuid())
    bad_mask(dir, kFile, "is not an empty mode-000 file of cordon's");
  if (::fstat(m.dir.held->fd(), &dst) != 0 || !S_ISDIR(dst.st_mode) || (dst.st_mode & 07777) != 0 ||
      dst.st_uid != ::geteuid())
    bad_mask(dir, kDir, "is not an empty mode-000 directory of cordon's");
  return m;
}

std::string new_run_id() {
  std::random_device rd;
  std::uint64_t v = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace cordon::docker
