// Identity choice (pure) and the writing of user-namespace maps (async-signal-safe).
#include "idmap.hpp"

#include <cordon/sdk/identity.hpp>
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

// The SDK's rule (cordon/sdk/identity.hpp), with this backend's settings.
Identity choose_identity(const IdentityInput& in) {
  sdk::CommandUserInput input{
      in.euid,         in.egid,         in.workspace_uid,        in.workspace_gid,
      in.settings.uid, in.settings.gid, "backends.landlock.uid", in.primary_gid};
  sdk::CommandUser who = sdk::choose_command_user(input);
  Identity id;
  id.uid = who.uid;
  id.gid = who.gid;
  id.parent_writes_maps = who.other_user;
  id.reason = who.reason;
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
