// Identity choice (pure) and the writing of user-namespace maps (async-signal-safe).
#include "idmap.hpp"

#include <cordon/user_db.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "child_util.hpp"

namespace cordon::landlock {

std::string Identity::uid_map() const {
  return std::to_string(uid) + " " + std::to_string(uid) + " 1\n";
}

std::string Identity::gid_map() const {
  return std::to_string(gid) + " " + std::to_string(gid) + " 1\n";
}

namespace {

gid_t group_for(uid_t uid, const IdentityInput& in, std::optional<gid_t> fallback) {
  if (in.settings.gid) return *in.settings.gid;
  if (in.primary_gid)
    if (auto g = in.primary_gid(uid); g && *g != 0) return *g;
  if (fallback && *fallback != 0) return *fallback;
  return kNobody;
}

}  // namespace

Identity choose_identity(const IdentityInput& in) {
  Identity id;
  if (in.euid != 0) {
    id.uid = in.euid;
    id.gid = in.egid;
    id.reason = "the calling user (uid " + std::to_string(in.euid) + ")";
    return id;
  }
  id.parent_writes_maps = true;
  if (in.settings.uid) {
    id.uid = *in.settings.uid;
    id.gid = group_for(id.uid, in, std::nullopt);
    id.reason = "backends.landlock.uid = " + std::to_string(id.uid);
  } else if (in.workspace_uid != 0) {
    id.uid = in.workspace_uid;
    id.gid = group_for(id.uid, in, in.workspace_gid);
    id.reason = "the workspace's owner (uid " + std::to_string(id.uid) + ")";
  } else {
    id.uid = kNobody;
    id.gid = in.settings.gid ? *in.settings.gid : kNobody;
    id.reason = "nobody (uid 65534): the workspace belongs to root";
  }
  return id;
}

std::optional<gid_t> lookup_primary_gid(uid_t uid) {
  auto entry = find_user(uid);
  return entry ? std::optional<gid_t>(entry->gid) : std::nullopt;
}

namespace {

int write_file(const char* path, const char* text) noexcept {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  ssize_t len = static_cast<ssize_t>(std::strlen(text));
  ssize_t n = ::write(fd, text, static_cast<size_t>(len));
  int err = n == len ? 0 : (n < 0 ? -errno : -EIO);
  ::close(fd);
  return err;
}

}  // namespace

int write_id_maps(pid_t pid, const char* uid_map, const char* gid_map, bool deny_setgroups,
                  const char** failed) noexcept {
  char base[32];
  char path[64];
  if (pid == 0) {
    child::copy(base, sizeof base, "/proc/self/");
  } else {
    char digits[16];
    child::copy(base, sizeof base, "/proc/");
    child::append(base, sizeof base, child::format_uint(digits, sizeof digits, pid));
    child::append(base, sizeof base, "/");
  }
  struct Step {
    const char* file;
    const char* text;
  };
  const Step steps[] = {
      {"setgroups", deny_setgroups ? "deny" : nullptr}, {"gid_map", gid_map}, {"uid_map", uid_map}};
  for (const auto& step : steps) {
    if (step.text == nullptr) continue;
    child::copy(path, sizeof path, base);
    child::append(path, sizeof path, step.file);
    if (int err = write_file(path, step.text); err != 0) {
      if (failed) *failed = step.file;
      return err;
    }
  }
  return 0;
}

}  // namespace cordon::landlock
