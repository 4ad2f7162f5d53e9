// Identities of bind sources on the host, and the waiter's verdict on them in the container.
#include "mount_identity.hpp"

#include <cordon/sdk/path_guard.hpp>

#include <boost/json/array.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "api.hpp"

namespace cordon::docker {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

[[noreturn]] void cannot_check(const SourceToIdentify& source, int err) {
  throw Error(code::kIsolationFailed, "cannot check the mount source '" + source.path + "' (" +
                                          source.why + ") on the host: " + std::strerror(err));
}

}  // namespace

std::vector<SourceToIdentify> sources_to_identify(const std::vector<HostMount>& mounts,
                                                  const std::string& mask_file,
                                                  const std::string& mask_dir,
                                                  const std::string& waiter) {
  std::vector<SourceToIdentify> out;
  for (const auto& m : mounts) out.push_back({m.source, m.why});
  // cordon's own files in its verified state directory, identified like the rest.
  for (const auto& own : {mask_file, mask_dir, waiter}) out.push_back({own, "cordon's own file"});
  return out;
}

std::string first_symlink(const std::string& path) {
  std::string walked;
  for (const auto& part : fs::path(path).lexically_normal()) {
    if (part == "/") continue;
    walked += "/" + part.string();
    std::error_code ec;
    if (!fs::is_symlink(walked, ec)) continue;
    return "'" + walked + "' -> '" + fs::read_symlink(walked, ec).string() + "'";
  }
  return {};
}

SourceIdentity source_identity(const SourceToIdentify& source) {
  auto id = existing_source_identity(source);
  if (!id) cannot_check(source, ENOENT);
  return std::move(*id);
}

std::optional<SourceIdentity> existing_source_identity(const SourceToIdentify& source) {
  int fd = open_without_symlinks(source.path);
  if (fd < 0 && errno == ENOENT) return std::nullopt;
  if (fd < 0 && (errno == ELOOP || errno == EXDEV)) {
    std::string link = first_symlink(source.path);
    throw Error(code::kPathEscape,
                "the " + source.why + " '" + source.path + "' passes through a symlink" +
                    (link.empty() ? "" : " (" + link + ")") +
                    ": docker would mount whatever the link names when the container starts",
                "name the real directory; cordon mounts only a path without links");
  }
  if (fd < 0) cannot_check(source, errno);
  return identity_of_fd(fd, source.path);
}

SourceIdentity identity_of_fd(int fd, const std::string& path) {
  auto held = std::make_shared<const HeldFd>(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) cannot_check({path, "source"}, errno);
  SourceIdentity id;
  id.dev = static_cast<std::uint64_t>(st.st_dev);
  id.ino = static_cast<std::uint64_t>(st.st_ino);
  id.directory = S_ISDIR(st.st_mode);
  id.uid = st.st_uid;
  id.gid = st.st_gid;
  id.host_path = path;
  id.held = std::move(held);
  return id;
}

void identify_sources(const std::vector<SourceToIdentify>& sources, SourceIdentities& held) {
  for (const auto& s : sources)
    if (!held.count(s.path)) held.emplace(s.path, source_identity(s));
}

std::vector<MountCheck> mount_checks(const json::object& body, const SourceIdentities& identities) {
  std::vector<MountCheck> out;
  const auto* hc = body.if_contains("HostConfig");
  const auto* mounts = hc && hc->is_object() ? hc->as_object().if_contains("Mounts") : nullptr;
  if (!mounts || !mounts->is_array()) return out;
  for (const auto& m : mounts->as_array()) {
    if (!m.is_object() || string_member(m.as_object(), "Type") != "bind") continue;
    std::string source = string_member(m.as_object(), "Source");
    std::string target = string_member(m.as_object(), "Target");
    auto it = identities.find(source);
    if (it == identities.end())
      throw Error(code::kBackendFault, "the bind mount of '" + source + "' at '" + target +
                                           "' has no recorded identity to check");
    if (target.empty() || target.size() > kMaxWaiterTarget)
      throw Error(code::kIsolationFailed, "the mount target '" + target +
                                              "' cannot be checked: its length is " +
                                              std::to_string(target.size()));
    out.push_back({{target, it->second.dev, it->second.ino}, source, it->second});
  }
  if (out.size() > kMaxWaiterChecks)
    throw Error(code::kIsolationFailed,
                "the container would have " + std::to_string(out.size()) +
                    " bind mounts; at most " + std::to_string(kMaxWaiterChecks) + " can be checked",
                "block fewer paths inside the mounts");
  return out;
}

std::vector<WaiterCheck> waiter_checks(const std::vector<MountCheck>& checks) {
  std::vector<WaiterCheck> out;
  for (const auto& c : checks) out.push_back(c.check);
  return out;
}

std::optional<Error> check_failure(std::int64_t status, const std::vector<MountCheck>& checks) {
  if (status < 0 || status > 0xffffffffLL) return std::nullopt;
  auto value = static_cast<std::uint32_t>(status);
  std::uint32_t kind = value & kStatusKind;
  if (kind != kMountMismatch && kind != kMountUnreadable && kind != kMountThroughLink)
    return std::nullopt;
  std::size_t index = value & 0xffffu;
  std::string target = index < checks.size() ? checks[index].check.target : "?";
  std::string host = index < checks.size() ? checks[index].expected.host_path : "?";
  bool directory = index < checks.size() && checks[index].expected.directory;
  if (kind == kMountUnreadable)
    return Error(code::kIsolationFailed,
                 "mount " + target + " cannot be checked in the container: " +
                     std::strerror(static_cast<int>((value >> 16) & 0xffu)) +
                     "; the command was not run",
                 "the container's user must be able to reach every mount's target");
  if (kind == kMountThroughLink)
    return Error(code::kPathEscape,
                 "mount " + target +
                     " is reached through a symlink in the container, so it may "
                     "not be where cordon asked (host path " +
                     host + "); the command was not run",
                 "a link in the image above the target, or one renamed into a mount while the "
                 "container started: mount at a path without links");
  return Error(code::kPathEscape,
               "mount " + target + " is not the " + (directory ? "directory" : "file") +
                   " cordon checked (host path " + host +
                   "): it was changed after the check; the command was not run",
               "find what renames paths under the run's write grants (another run sharing the "
               "workspace?); a daemon on another host mounts its own paths and is always refused");
}

}  // namespace cordon::docker
