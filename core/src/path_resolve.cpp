// resolve_path: a policy path resolved once, each symlink on the way judged by where it lies
// and who could have written it.
#include <cordon/sdk/error.hpp>
#include <cordon/sdk/path_guard.hpp>

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <deque>
#include <filesystem>

namespace cordon {

namespace {

namespace fs = std::filesystem;

constexpr int kMaxLinks = 40;  // as the kernel's own limit on a lookup

struct Dir {
  int fd = -1;
  std::string path;  // canonical
  struct stat st {};
};

// The directories of the walk, root first; each descriptor is closed when popped.
class Walk {
 public:
  ~Walk() {
    while (!dirs_.empty()) pop();
  }
  bool start() {
    int fd = ::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return false;
    Dir root{fd, "/", {}};
    ::fstat(fd, &root.st);
    dirs_.assign(1, root);
    return true;
  }
  void restart_at_root() {
    while (dirs_.size() > 1) pop();
  }
  void up() {
    if (dirs_.size() > 1) pop();
  }
  void push(Dir d) { dirs_.push_back(std::move(d)); }
  const Dir& top() const { return dirs_.back(); }
  std::string child(const std::string& name) const {
    return top().path == "/" ? "/" + name : top().path + "/" + name;
  }

 private:
  void pop() {
    ::close(dirs_.back().fd);
    dirs_.pop_back();
  }
  std::vector<Dir> dirs_;
};

std::deque<std::string> components(const std::string& path) {
  std::deque<std::string> out;
  for (const auto& part : fs::path(path).relative_path()) {
    std::string s = part.string();
    if (!s.empty() && s != ".") out.push_back(std::move(s));
  }
  return out;
}

bool beneath(const std::string& path, const std::string& base) {
  if (base == "/") return path != "/";
  return path.size() > base.size() && path.compare(0, base.size(), base) == 0 &&
         path[base.size()] == '/';
}

bool allowed(LinkRule rule, const std::string& link, const struct stat& link_st, const Dir& in,
             const std::vector<std::string>& bases) {
  for (const auto& b : bases)
    if (rule != LinkRule::any && beneath(link, b)) return false;
  if (rule != LinkRule::trusted_only) return true;
  return link_st.st_uid == 0 && in.st.st_uid == 0 && (in.st.st_mode & 022) == 0;
}

std::string read_link(int fd) {
  char buf[PATH_MAX];
  ssize_t n = ::readlinkat(fd, "", buf, sizeof buf);
  return n > 0 && n < static_cast<ssize_t>(sizeof buf) ? std::string(buf, static_cast<size_t>(n))
                                                       : std::string();
}

std::string rest_of(std::string at, const std::deque<std::string>& rest) {
  for (const auto& c : rest) at += (at == "/" ? "" : "/") + c;
  return at;
}

// The slow way: one component at a time, from the descriptor of its parent.
ResolvedPath walk(const std::string& path, LinkRule rule, const std::vector<std::string>& bases) {
  ResolvedPath r;
  r.path = path;
  Walk w;
  if (!w.start()) return r;
  auto todo = components(path);
  int links = 0;
  while (!todo.empty()) {
    std::string name = std::move(todo.front());
    todo.pop_front();
    if (name == "..") {
      w.up();
      continue;
    }
    std::string here = w.child(name);
    int fd = ::openat(w.top().fd, name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0) {
      if (fd >= 0) ::close(fd);
      todo.push_front(name);
      r.path = rest_of(w.top().path, todo);
      return r;
    }
    if (!S_ISLNK(st.st_mode)) {
      w.push({fd, here, st});
      continue;
    }
    LinkStep step{here, read_link(fd)};
    ::close(fd);
    if (step.target.empty() || ++links > kMaxLinks || !allowed(rule, here, st, w.top(), bases)) {
      r.refused = step;
      r.path = rest_of(here, todo);
      return r;
    }
    r.links.push_back(step);
    auto more = components(step.target);
    todo.insert(todo.begin(), more.begin(), more.end());
    if (step.target.front() == '/') w.restart_at_root();
  }
  const Dir& end = w.top();
  r.path = end.path;
  r.exists = true;
  r.dir = S_ISDIR(end.st.st_mode);
  r.dev = end.st.st_dev;
  r.ino = end.st.st_ino;
  return r;
}

// Every link followed by the kernel, in one lookup: what the path names, by the name its
// descriptor has (the links are not recorded).
ResolvedPath follow(const std::string& path) {
  ResolvedPath r;
  r.path = path;
  int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
  if (fd < 0) return r;
  struct stat st {};
  char link[32], target[PATH_MAX];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = ::fstat(fd, &st) == 0 ? ::readlink(link, target, sizeof target - 1) : -1;
  ::close(fd);
  if (n <= 0 || target[0] != '/') return walk(path, LinkRule::any, {});  // no /proc
  r.path.assign(target, static_cast<std::size_t>(n));
  r.exists = true;
  r.dir = S_ISDIR(st.st_mode);
  r.dev = st.st_dev;
  r.ino = st.st_ino;
  return r;
}

}  // namespace

ResolvedPath resolve_path(const std::string& path, LinkRule rule,
                          const std::vector<std::string>& bases) {
  ResolvedPath r;
  r.path = fs::path(path).lexically_normal().string();
  while (r.path.size() > 1 && r.path.back() == '/') r.path.pop_back();
  if (r.path.empty() || r.path.front() != '/') return r;
  int fd = open_without_symlinks(r.path);
  if (fd >= 0) {
    struct stat st {};
    bool ok = ::fstat(fd, &st) == 0;
    ::close(fd);
    if (!ok) return r;
    r.exists = true;
    r.dir = S_ISDIR(st.st_mode);
    r.dev = st.st_dev;
    r.ino = st.st_ino;
    return r;
  }
  // Missing, or not searchable, with no symlink met on the way: no other lookup finds it.
  if (errno != ELOOP) return r;
  return rule == LinkRule::any ? follow(r.path) : walk(r.path, rule, bases);
}

ResolvedPath resolve_workspace(const std::string& path) {
  ResolvedPath r = resolve_path(path, LinkRule::trusted_only);
  if (r.refused)
    throw Error(code::kPathEscape,
                "workspace '" + path + "' passes through the symlink '" + r.refused->path +
                    "' -> '" + r.refused->target + "'",
                "name the real directory as the workspace; a link in a path a command could "
                "write may have been planted by it");
  if (!r.exists || !r.dir)
    throw Error(code::kBadArgument, "workspace '" + path + "' is not an existing directory",
                "pass an existing directory to --workspace");
  return r;
}

}  // namespace cordon
