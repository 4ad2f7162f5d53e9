// Identities of bind sources on the host, and the waiter's verdict on them in the container.
#include "mount_identity.hpp"

#include <cordon/path_guard.hpp>

#include <boost/json/array.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace cordon::docker {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

[[noreturn]] void cannot_check(const SourceToIdentify& source, int err) {
  throw Error(code::kIsolationFailed, "cannot check the mount source '" + source.path +
                                          "' on the host: " + std::strerror(err));
}

std::string text(const json::object& o, const char* key) {
  const auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

}  // namespace

std::vector<SourceToIdentify> sources_to_identify(const std::vector<HostMount>& mounts,
                                                  const std::string& mask_file,
                                                  const std::string& mask_dir,
                                                  const std::string& waiter) {
  std::vector<SourceToIdentify> out;
  // A write path is canonical when cordon checked it (existing_write_paths): a symlink in it
  // now was put there since. Every other source is configured as the caller or operator wrote it.
  for (const auto& m : mounts) out.push_back({m.source, m.why != "filesystem.write"});
  // cordon's own files in its state directory: made with O_NOFOLLOW and checked (ensure_masks,
  // ensure_waiter), identified like the rest. A swapped waiter would not check anything, but it
  // lies in the caller's own state directory, not under a grant of the command's.
  for (const auto& own : {mask_file, mask_dir, waiter}) out.push_back({own, true});
  return out;
}

SourceIdentity source_identity(const SourceToIdentify& source) {
  std::string path = source.path;
  int fd = open_without_symlinks(path);
  if (fd < 0 && errno == ELOOP && source.configured) {
    std::error_code ec;
    path = fs::canonical(source.path, ec).string();
    if (ec) cannot_check(source, ec.value());
    fd = open_without_symlinks(path);
  }
  if (fd < 0 && (errno == ELOOP || errno == EXDEV))
    throw Error(code::kPathEscape,
                "mount source '" + source.path +
                    "' resolves through a symlink now, after cordon checked it: it was changed "
                    "while the run was being set up",
                "find what renames paths under the run's write grants");
  if (fd < 0) cannot_check(source, errno);
  struct stat st {};
  int rc = ::fstat(fd, &st);
  int err = errno;
  ::close(fd);
  if (rc != 0) cannot_check(source, err);
  return {static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino),
          S_ISDIR(st.st_mode), path};
}

SourceIdentities identify_sources(const std::vector<SourceToIdentify>& sources) {
  SourceIdentities out;
  for (const auto& s : sources)
    if (!out.count(s.path)) out.emplace(s.path, source_identity(s));
  return out;
}

std::vector<MountCheck> mount_checks(const json::object& body, const SourceIdentities& identities) {
  std::vector<MountCheck> out;
  const auto* hc = body.if_contains("HostConfig");
  const auto* mounts = hc && hc->is_object() ? hc->as_object().if_contains("Mounts") : nullptr;
  if (!mounts || !mounts->is_array()) return out;
  for (const auto& m : mounts->as_array()) {
    if (!m.is_object() || text(m.as_object(), "Type") != "bind") continue;
    std::string source = text(m.as_object(), "Source");
    std::string target = text(m.as_object(), "Target");
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
  std::uint32_t kind = value & 0xff000000u;
  if (kind != kMountMismatch && kind != kMountUnreadable) return std::nullopt;
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
  return Error(code::kPathEscape,
               "mount " + target + " is not the " + (directory ? "directory" : "file") +
                   " cordon checked (host path " + host +
                   "): it was changed after the check; the command was not run",
               "find what renames paths under the run's write grants (another run sharing the "
               "workspace?); a daemon on another host mounts its own paths and is always refused");
}

}  // namespace cordon::docker
