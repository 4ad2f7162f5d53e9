// Resolution of the policy's paths and program names on the host.
#include "host_paths.hpp"

#include <cordon/sdk/error.hpp>
#include <cordon/sdk/path_guard.hpp>

#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

#include "fd.hpp"
#include "host_masks.hpp"
#include "layout.hpp"

namespace cordon::landlock {

namespace fs = std::filesystem;

const std::string& system_search_path() {
  static const std::string path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  return path;
}

namespace {

// The lexically normal form of an absolute path, without a trailing slash.
std::string normal(const std::string& path) {
  std::string n = fs::path(path).lexically_normal().string();
  while (n.size() > 1 && n.back() == '/') n.pop_back();
  return n;
}

// What `path` names now, following any symlink (for paths no sandbox can write: programs,
// interpreters, the resolver's file, the home).
std::optional<HostPath> existing(const std::string& path) {
  ResolvedPath r = resolve_path(path, LinkRule::any);
  if (!r.exists) return std::nullopt;
  return HostPath{r.path, r.dir, r.dev, r.ino};
}

// Records the symlinks a resolution followed (e.g. /bin -> usr/bin), so that the policy's
// spellings work inside.
void keep_links(const ResolvedPath& r, HostView& view) {
  for (const auto& l : r.links) {
    std::pair<std::string, std::string> link{l.path, l.target};
    if (std::find(view.links.begin(), view.links.end(), link) == view.links.end())
      view.links.push_back(std::move(link));
  }
}

[[noreturn]] void refuse_planted(const std::string& p, const LinkStep& link) {
  throw Error(code::kPathEscape,
              "policy path '" + p + "' resolves through the symlink '" + link.path + "' -> '" +
                  link.target + "' in a writable directory; its target is not granted",
              "grant the target's real path in the policy, or remove the symlink");
}

void add_paths(const std::vector<std::string>& given, const char* what, std::vector<HostPath>& out,
               HostView& view, const std::vector<std::string>& writable_bases) {
  for (const auto& p : given) {
    ResolvedPath r = resolve_path(p, LinkRule::outside_bases, writable_bases);
    if (r.refused) refuse_planted(p, *r.refused);
    if (!r.exists) {
      view.notes.push_back(std::string(what) + " path '" + p + "' does not exist: skipped");
      continue;
    }
    keep_links(r, view);
    HostPath found{r.path, r.dir, r.dev, r.ino};
    if (std::find(out.begin(), out.end(), found) == out.end()) out.push_back(found);
  }
}

std::string env_path(const Plan& plan) {
  auto it = plan.env.find("PATH");
  return it != plan.env.end() ? it->second : std::string("/usr/local/bin:/usr/bin:/bin");
}

void add_programs(const std::vector<std::string>& names, const std::string& search,
                  std::vector<std::string>& out, std::vector<std::string>* missing) {
  if (names.empty()) return;  // the search path is not even read
  const auto dirs = search_dirs(search);
  for (const auto& name : names) {
    auto files = resolve_program(name, dirs);
    if (files.empty() && missing) missing->push_back(name);
    for (auto& f : files)
      if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
  }
}

// Adds the interpreters of the allowed programs (and theirs), so that they can start.
void add_interpreters(std::vector<std::string>& programs) {
  for (std::size_t i = 0; i < programs.size() && i < 64; ++i) {
    auto interp = interpreter_of(programs[i]);
    if (interp.empty()) continue;
    auto found = existing(interp);
    if (found && std::find(programs.begin(), programs.end(), found->path) == programs.end())
      programs.push_back(found->path);
  }
}

std::vector<RootEntry> root_entries() {
  std::vector<RootEntry> entries;
  DIR* dir = ::opendir("/");
  if (dir == nullptr) return entries;
  while (auto* e = ::readdir(dir)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    struct stat st {};
    std::string path = "/" + name;
    if (::lstat(path.c_str(), &st) != 0) continue;
    RootEntry entry{name, RootEntry::Kind::dir, {}};
    if (S_ISLNK(st.st_mode)) {
      entry.kind = RootEntry::Kind::symlink;
      std::error_code ec;
      entry.link_target = fs::read_symlink(path, ec).string();
      if (ec) continue;
    } else if (!S_ISDIR(st.st_mode)) {
      entry.kind = RootEntry::Kind::file;
    }
    entries.push_back(std::move(entry));
  }
  ::closedir(dir);
  std::sort(entries.begin(), entries.end(),
            [](const RootEntry& a, const RootEntry& b) { return a.name < b.name; });
  return entries;
}

bool is_root(const std::string& p) { return fs::path(p).lexically_normal() == "/"; }

// With the network allowed, name resolution needs the file /etc/resolv.conf points to.
void add_resolver(HostView& view) {
  auto target = resolver_file("/etc/resolv.conf", view.read_host, view.read);
  if (!target) return;
  view.read.push_back(*target);
  view.notes.push_back("network.allow: '" + target->path +
                       "' (the target of /etc/resolv.conf) is readable for name resolution");
}

}  // namespace

std::optional<HostPath> resolver_file(const std::string& conf, bool read_host,
                                      const std::vector<HostPath>& read) {
  auto target = existing(conf);
  if (!target || target->dir || target->path == normal(conf)) return std::nullopt;
  // read = "host" shows every file but those under /run (layout.cpp), where systemd-resolved
  // keeps it.
  if (read_host) return is_within(target->path, "/run") ? target : std::nullopt;
  std::string dir = fs::path(normal(conf)).parent_path().string();
  bool dir_readable = std::any_of(read.begin(), read.end(), [&dir](const HostPath& p) {
    return p.dir && is_within(dir, p.path);
  });
  return dir_readable ? target : std::nullopt;
}

std::vector<std::string> search_dirs(const std::string& search) {
  std::vector<std::string> seen, dirs;  // a directory named twice, or reached twice, once
  std::size_t start = 0;
  while (start <= search.size()) {
    auto end = search.find(':', start);
    if (end == std::string::npos) end = search.size();
    auto dir = search.substr(start, end - start);
    start = end + 1;
    if (dir.empty() || dir.front() != '/' || std::find(seen.begin(), seen.end(), dir) != seen.end())
      continue;
    auto found = existing(dir);
    if (found && found->dir && std::find(dirs.begin(), dirs.end(), found->path) == dirs.end())
      dirs.push_back(found->path);
    seen.push_back(std::move(dir));
  }
  return dirs;
}

std::vector<std::string> resolve_program(const std::string& name,
                                         const std::vector<std::string>& dirs) {
  std::vector<std::string> files;
  auto consider = [&files](const std::string& candidate) {
    auto found = existing(candidate);
    if (found && !found->dir && std::find(files.begin(), files.end(), found->path) == files.end())
      files.push_back(found->path);
  };
  if (name.find('/') != std::string::npos) {
    consider(name);
    return files;
  }
  for (const auto& dir : dirs) consider(dir == "/" ? "/" + name : dir + "/" + name);
  return files;
}

std::vector<std::string> resolve_program(const std::string& name, const std::string& search) {
  return resolve_program(
      name, name.find('/') != std::string::npos ? std::vector<std::string>{} : search_dirs(search));
}

std::string interpreter_of(const std::string& file) {
  UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return {};
  char head[4096];
  ssize_t n = ::pread(fd.get(), head, sizeof head, 0);
  if (n >= 2 && head[0] == '#' && head[1] == '!') {
    std::string line(head + 2, head + n);
    line = line.substr(0, line.find('\n'));
    auto begin = line.find_first_not_of(" \t");
    if (begin == std::string::npos) return {};
    auto end = line.find_first_of(" \t", begin);
    return line.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
  }
  if (n < static_cast<ssize_t>(sizeof(Elf64_Ehdr)) || std::memcmp(head, ELFMAG, SELFMAG) != 0 ||
      head[EI_CLASS] != ELFCLASS64)
    return {};
  Elf64_Ehdr eh;
  std::memcpy(&eh, head, sizeof eh);
  for (unsigned i = 0; i < eh.e_phnum && i < 64; ++i) {
    Elf64_Phdr ph;
    if (::pread(fd.get(), &ph, sizeof ph, static_cast<off_t>(eh.e_phoff + i * eh.e_phentsize)) !=
        static_cast<ssize_t>(sizeof ph))
      return {};
    if (ph.p_type != PT_INTERP || ph.p_filesz == 0 || ph.p_filesz > 4096) continue;
    std::string interp(ph.p_filesz, '\0');
    if (::pread(fd.get(), interp.data(), ph.p_filesz, static_cast<off_t>(ph.p_offset)) !=
        static_cast<ssize_t>(ph.p_filesz))
      return {};
    return interp.substr(0, interp.find('\0'));
  }
  return {};
}

namespace {

// The canonical writable directories: the workspace, then each write grant. A grant reached
// through a symlink beneath another writable directory is refused by add_paths; the second
// pass checks every grant against all the others.
std::vector<std::string> writable_dirs(const std::vector<std::string>& grants,
                                       const std::string& workspace) {
  std::vector<std::string> dirs{workspace};
  for (const auto& w : grants) {
    ResolvedPath r = resolve_path(w, LinkRule::outside_bases, dirs);
    if (r.exists && !r.refused && std::find(dirs.begin(), dirs.end(), r.path) == dirs.end())
      dirs.push_back(r.path);
  }
  return dirs;
}

}  // namespace

namespace {

std::vector<gid_t> groups_of(const SandboxUser& user) {
  if (!user.gids.empty()) return user.gids;
  std::vector<gid_t> out{::getegid()};
  int n = ::getgroups(0, nullptr);
  if (n > 0) {
    std::vector<gid_t> more(static_cast<std::size_t>(n));
    n = ::getgroups(n, more.data());
    if (n > 0) out.insert(out.end(), more.begin(), more.begin() + n);
  }
  return out;
}

}  // namespace

HostView gather_host_view(const Plan& plan, const SandboxUser& user,
                          const MulticallLookup& applets_of) {
  HostView view;
  const auto& fsys = plan.policy.filesystem;
  ResolvedPath ws = resolve_workspace(plan.workspace.string());
  view.workspace = {ws.path, true, ws.dev, ws.ino};
  keep_links(ws, view);
  view.read_host = fsys.read_host || std::any_of(fsys.read.begin(), fsys.read.end(), is_root);
  if (auto home = existing(plan.host_home.string()); home && home->dir) {
    view.home = home->path;
    view.home_exists = true;
  } else {
    view.home = plan.host_home.lexically_normal().string();
  }
  std::vector<std::string> writable = writable_dirs(fsys.write, view.workspace.path);
  add_paths(fsys.write, "write", view.write, view, writable);
  // write = "host" asks for no write confinement: the workspace is writable, the rest of the
  // host stays read-only (stricter than asked, never weaker).
  view.workspace_writable =
      fsys.write_host || std::any_of(view.write.begin(), view.write.end(), [&](const HostPath& w) {
        return is_within(view.workspace.path, w.path);
      });
  if (!view.read_host) add_paths(fsys.read, "read", view.read, view, writable);
  if (plan.policy.network.allow) add_resolver(view);
  gather_masks(plan, {writable, user.uid, groups_of(user)},
               env_path(plan) + ":" + system_search_path(), applets_of, view);
  add_programs(plan.policy.process.allowed_commands, env_path(plan), view.allowed_exec,
               &view.allowed_missing);
  add_interpreters(view.allowed_exec);
  if (view.read_host) view.root_entries = root_entries();
  return view;
}

}  // namespace cordon::landlock
