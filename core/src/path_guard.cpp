// refuse_planted_symlink: openat2 beneath each writable base, refusing symlinks on the way.
#include <cordon/error.hpp>
#include <cordon/path_guard.hpp>

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace cordon {

namespace {

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_;
};

}  // namespace

void refuse_planted_symlink(const std::string& path, const std::vector<std::string>& bases) {
  for (const auto& base : bases) {
    std::string dir = base.empty() || base.back() == '/' ? base : base + "/";
    if (dir.empty() || path.size() <= dir.size() || path.rfind(dir, 0) != 0) continue;
    Fd root(::open(base.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!root) continue;
    open_how how{};
    how.flags = O_PATH | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    std::string rest = path.substr(dir.size());
    Fd fd(static_cast<int>(::syscall(SYS_openat2, root.get(), rest.c_str(), &how, sizeof how)));
    if (!fd && (errno == ELOOP || errno == EXDEV))
      throw Error(code::kPathEscape,
                  "policy path '" + path + "' lies in the writable directory '" + base +
                      "' and resolves through a symlink there; its target is not granted",
                  "grant the target's real path in the policy, or remove the symlink");
  }
}

}  // namespace cordon
