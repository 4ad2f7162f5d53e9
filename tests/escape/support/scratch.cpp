// The scratch tree each escape test runs in.
#include "scratch.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

namespace escape {
namespace fs = std::filesystem;

namespace {

/// Base directory for scratch trees: CORDON_ESCAPE_TMPDIR, else /var/tmp, else TMPDIR, else
/// /tmp. /var/tmp first because the sandbox's /tmp is private: a tree under the host's /tmp is
/// hidden from a read = "host" policy and its parents are writable (in the private /tmp), which
/// would blur what a test proves.
std::string scratch_base() {
  if (const char* v = std::getenv("CORDON_ESCAPE_TMPDIR"); v != nullptr && *v != '\0') return v;
  if (access("/var/tmp", W_OK | X_OK) == 0) return "/var/tmp";
  if (const char* v = std::getenv("TMPDIR"); v != nullptr && *v != '\0') return v;
  return "/tmp";
}

void check(bool ok, const std::string& what) {
  if (!ok) throw std::system_error(errno, std::generic_category(), what);
}

/// Makes everything below `p` removable by us again (a test may have chmod-ed things).
void make_removable(const fs::path& p) {
  std::error_code ec;
  for (auto it =
           fs::recursive_directory_iterator(p, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory(ec) && !it->is_symlink(ec)) ::chmod(it->path().c_str(), 0755);
  }
}

}  // namespace

Scratch::Scratch() {
  std::string tmpl = scratch_base() + "/cordon-escape-XXXXXX";
  check(mkdtemp(tmpl.data()) != nullptr, "mkdtemp " + tmpl);
  root_ = tmpl;
  // The sandbox runs as another uid when we are root, and must be able to traverse to ws/.
  check(::chmod(root_.c_str(), 0755) == 0, "chmod " + root_);
  mkdir(ws());
  give_to_sandbox(ws());
  mkdir(listed());
  write(listed() + "/ok.txt", kListedContent);
  mkdir(unlisted());
  write(unlisted() + "/secret.txt", kSecretContent);
  mkdir(ro());
  write(ro() + "/file.txt", kReadOnlyContent);
  mkdir(path("policies"));
}

Scratch::~Scratch() {
  if (std::getenv("CORDON_ESCAPE_KEEP") != nullptr) return;
  std::error_code ec;
  make_removable(root_);
  fs::remove_all(root_, ec);
}

void Scratch::write(const std::string& p, const std::string& content, mode_t mode) const {
  fs::create_directories(fs::path(p).parent_path());
  int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  check(fd >= 0, "open " + p);
  bool ok = ::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size());
  ::close(fd);
  check(ok, "write " + p);
  check(::chmod(p.c_str(), mode) == 0, "chmod " + p);
}

std::string Scratch::read(const std::string& p) const {
  std::ifstream in(p, std::ios::binary);
  if (!in) return "<missing>";
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void Scratch::mkdir(const std::string& p, mode_t mode) const {
  fs::create_directories(p);
  check(::chmod(p.c_str(), mode) == 0, "chmod " + p);
}

void Scratch::give_to_sandbox(const std::string& p) const {
  if (!running_as_root()) return;
  uid_t uid = sandbox_uid();
  passwd* pw = getpwuid(uid);
  gid_t gid = pw != nullptr ? pw->pw_gid : uid;
  check(::lchown(p.c_str(), uid, gid) == 0, "chown " + p);
}

std::string Scratch::policy_file(const std::string& toml) {
  std::string p = path("policies/policy-" + std::to_string(++policies_) + ".toml");
  write(p, toml);
  return p;
}

bool running_as_root() { return geteuid() == 0; }

uid_t sandbox_uid() {
  if (!running_as_root()) return geteuid();
  if (const char* v = std::getenv("CORDON_ESCAPE_SANDBOX_UID"); v != nullptr && *v != '\0')
    return static_cast<uid_t>(std::stoul(v));
  const char* user = std::getenv("CORDON_TEST_USER");
  if (passwd* pw = getpwnam(user != nullptr ? user : "cordon-test"); pw != nullptr)
    return pw->pw_uid;
  return 65534;
}

int file_mode(const std::string& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return -1;
  return static_cast<int>(st.st_mode & 07777);
}

bool exists(const std::string& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0;
}

}  // namespace escape
