// refuse_planted_symlink: openat2 beneath each writable base, refusing symlinks on the way;
// open_without_symlinks: the same from the root.
#include <cordon/sdk/error.hpp>
#include <cordon/sdk/path_guard.hpp>

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "unique_fd.hpp"

namespace cordon {

void refuse_planted_symlink(const std::string& path, const std::vector<std::string>& bases) {
  for (const auto& base : bases) {
    std::string dir = base.empty() || base.back() == '/' ? base : base + "/";
    if (dir.empty() || path.size() <= dir.size() || path.rfind(dir, 0) != 0) continue;
    detail::Fd root(::open(base.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (root.fd < 0) continue;
    open_how how{};
    how.flags = O_PATH | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    std::string rest = path.substr(dir.size());
    detail::Fd fd(
        static_cast<int>(::syscall(SYS_openat2, root.fd, rest.c_str(), &how, sizeof how)));
    if (fd.fd < 0 && (errno == ELOOP || errno == EXDEV))
      throw Error(code::kPathEscape,
                  "policy path '" + path + "' lies in the writable directory '" + base +
                      "' and resolves through a symlink there; its target is not granted",
                  "grant the target's real path in the policy, or remove the symlink");
  }
}

Error masked_link_refusal(const char* code, MaskedKind kind, const std::string& path,
                          const LinkStep& link) {
  bool own = kind == MaskedKind::own_state;
  return Error(code,
               std::string(own ? "cordon's own state" : "blocked path") + " '" + path +
                   "' passes through the symlink '" + link.path + "' -> '" + link.target +
                   "' inside a writable directory: its mask cannot be bound to what it names",
               own ? "remove the symlink, or keep the command's write grants away from it (a "
                     "policy file: name it, and the files it extends, by their real paths)"
                   : "remove the symlink, or name the real path in the policy");
}

int open_without_symlinks(const std::string& path) noexcept {
  if (path.empty() || path[0] != '/') {
    errno = EINVAL;
    return -1;
  }
  open_how how{};
  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  return static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof how));
}

}  // namespace cordon
