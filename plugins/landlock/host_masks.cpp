// Finding what the sandbox's masks go on: each blocked path and each of cordon's own state
// directories resolved once, with its identity, and the other mounts that show the same object.
#include "host_masks.hpp"

#include <cordon/sdk/error.hpp>
#include <cordon/sdk/path_guard.hpp>

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>

#include "fd.hpp"
#include "layout.hpp"

namespace cordon::landlock {

namespace fs = std::filesystem;

namespace {

void add_unique(std::vector<HostPath>& out, const HostPath& p) {
  if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
}

// Adds `p` to the masks of `out`, or to the unreachable when the command cannot get to it.
void add_mask(std::vector<HostPath>& out, const HostPath& p, const Writable& w, HostView& view) {
  if (reachable_by(p.path, w.uid, w.gids))
    add_unique(out, p);
  else if (std::find(view.unreachable.begin(), view.unreachable.end(), p.path) ==
           view.unreachable.end())
    view.unreachable.push_back(p.path);
}

void add_blocked(const std::vector<std::string>& given, const Writable& w, HostView& view) {
  for (const auto& p : given) {
    ResolvedPath r = resolve_path(p, LinkRule::outside_bases, w.dirs);
    if (r.refused)
      throw masked_link_refusal(code::kIsolationFailed, MaskedKind::blocked, p, *r.refused);
    if (!r.exists) {
      view.blocked_missing.push_back(p);
      continue;
    }
    add_mask(view.blocked, {r.path, r.dir, r.dev, r.ino}, w, view);
    // The same file under another name (a hard link) is masked too, or the run refused.
    OtherNames others = other_names_to_mask(r.path, w.dirs);
    for (const auto& name : others.names) {
      ResolvedPath n = resolve_path(name, LinkRule::outside_bases, w.dirs);
      if (n.exists && !n.refused) add_mask(view.blocked, {n.path, n.dir, n.dev, n.ino}, w, view);
    }
    if (!others.walked_all) view.notes.push_back(unwalked_note(r.path));
  }
}

// Whether the command could create the missing `path`: its nearest existing directory lies
// where it may write (a write grant, or anywhere with write = "host") and its mode lets the
// command's uid write there (group write counts: the command may be in the group).
bool creatable(const std::string& path, const ResolvedPath& r, const Writable& w, bool write_host) {
  // Where the command would create it: through a symlinked level (~/.config -> ~/dots/config)
  // that lies in a write grant although its own name does not. Where `r` met no symlink, the
  // path is that place already (a dozen system calls fewer for each missing directory).
  std::string at = path;
  if (!r.links.empty()) {
    std::error_code ec;
    auto resolved = std::filesystem::weakly_canonical(path, ec);
    if (!ec) at = resolved.string();
  }
  struct stat st {};
  do {
    at = at.substr(0, std::max<std::size_t>(at.rfind('/'), 1));
  } while (::lstat(at.c_str(), &st) != 0 && at != "/");
  // A dangling link on the way: what it names may be made by anyone who can write there.
  if (S_ISLNK(st.st_mode)) return true;
  bool granted = write_host || std::any_of(w.dirs.begin(), w.dirs.end(),
                                           [&at](const auto& d) { return is_within(at, d); });
  bool may = (st.st_uid == w.uid && (st.st_mode & S_IWUSR)) || (st.st_mode & (S_IWGRP | S_IWOTH));
  return granted && S_ISDIR(st.st_mode) && may;
}

// A missing directory of cordon's that the command could create would be trusted by a later
// cordon: the core creates its state directories before a run, so this is a plugin directory
// or a configuration file named but absent.
void add_own_state(const std::vector<fs::path>& given, const Writable& w, bool write_host,
                   HostView& view) {
  for (const auto& path : given) {
    std::string p = path.lexically_normal().string();
    ResolvedPath r = resolve_path(p, LinkRule::outside_bases, w.dirs);
    if (r.refused)
      throw masked_link_refusal(code::kIsolationFailed, MaskedKind::own_state, p, *r.refused);
    if (!r.exists && creatable(p, r, w, write_host))
      throw Error(code::kIsolationFailed,
                  "cordon's own state '" + p +
                      "' does not exist, and the command could create it for a later cordon to "
                      "trust",
                  "create it (mode 0700, as the user it belongs to), or keep the command's write "
                  "grants away from it");
    for (const auto& d : w.dirs)
      if (is_within(d, p))
        throw Error(code::kPathEscape,
                    "the writable '" + d + "' lies inside cordon's own state '" + p + "'",
                    "choose a workspace and write paths outside cordon's state directories");
    if (r.exists) add_mask(view.own_state, {r.path, r.dir, r.dev, r.ino}, w, view);
  }
}

void add_aliases(const Writable& w, HostView& view) {
  if (view.blocked.empty() && view.own_state.empty()) return;
  auto text = read_text("/proc/self/mountinfo", 1 << 20);
  if (!text) return;
  auto mounts = parse_mountinfo(*text);
  auto add_for = [&](const HostPath& object) {
    for (const auto& alias : alias_paths(mounts, object.dev, object.path)) {
      ResolvedPath r = resolve_path(alias, LinkRule::any);
      // Shown there only if the same object is found there.
      if (r.exists && r.dev == object.dev && r.ino == object.ino && r.path == alias)
        add_mask(view.aliases, {alias, object.dir, object.dev, object.ino}, w, view);
    }
  };
  for (const auto& b : view.blocked) add_for(b);
  for (const auto& o : view.own_state) add_for(o);
}

void add_program(const std::string& file, const std::vector<std::string>& writable,
                 HostView& view) {
  // One the command could write is its own file, and a mask on it could be raced: skipped.
  ResolvedPath r = resolve_path(file, LinkRule::outside_bases, writable);
  if (!r.exists || r.refused) return;
  add_unique(view.blocked_exec, {r.path, r.dir, r.dev, r.ino});
  // A hard link is the same program under another name.
  for (auto& name : other_names_to_mask(r.path, writable).names)
    add_unique(view.blocked_exec, {std::move(name), false, r.dev, r.ino});
}

std::string base_name(const std::string& name) { return name.substr(name.rfind('/') + 1); }

// `busybox su` runs su's code without executing su's file: a busybox that provides a blocked
// name as an applet is masked too.
void add_multicall(const std::vector<std::string>& names, const std::vector<std::string>& dirs,
                   const std::vector<std::string>& writable, const AppletsOf& applets_of,
                   HostView& view) {
  for (const auto& file : resolve_program("busybox", dirs)) {
    auto applets = applets_of(file);
    for (const auto& name : names) {
      if (std::find(applets.begin(), applets.end(), base_name(name)) == applets.end()) continue;
      view.notes.push_back("'" + file + "' provides the blocked '" + base_name(name) +
                           "' as an applet: masked too");
      add_program(file, writable, view);
      break;
    }
  }
}

void add_blocked_programs(const std::vector<std::string>& names, const std::string& search,
                          const std::vector<std::string>& writable, const AppletsOf& applets_of,
                          HostView& view) {
  if (names.empty()) return;
  const auto dirs = search_dirs(search);
  for (const auto& name : names)
    for (const auto& file : resolve_program(name, dirs)) add_program(file, writable, view);
  add_multicall(names, dirs, writable, applets_of, view);
}

// mountinfo(5) escapes space, tab, newline and backslash as three octal digits.
std::string unescape(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '3') {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::vector<std::string_view> fields(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    std::size_t j = line.find(' ', i);
    if (j == std::string_view::npos) j = line.size();
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

// "a/b" beneath "a": the rest ("" for itself, "/b" beneath), or nothing.
std::optional<std::string> rest_under(const std::string& path, const std::string& dir) {
  if (!is_within(path, dir)) return std::nullopt;
  return dir == "/" ? path : path.substr(dir.size());
}

// A section of a 64-bit ELF file by name: offset and size, or {0, 0}.
std::pair<std::uint64_t, std::uint64_t> elf_section(int fd, const char* wanted) {
  Elf64_Ehdr eh;
  if (::pread(fd, &eh, sizeof eh, 0) != static_cast<ssize_t>(sizeof eh) ||
      std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 || eh.e_shnum > 512 ||
      eh.e_shstrndx >= eh.e_shnum)
    return {0, 0};
  std::vector<Elf64_Shdr> sh(eh.e_shnum);
  auto bytes = static_cast<ssize_t>(sh.size() * sizeof(Elf64_Shdr));
  if (::pread(fd, sh.data(), static_cast<std::size_t>(bytes), static_cast<off_t>(eh.e_shoff)) !=
      bytes)
    return {0, 0};
  char names[4096] = {};
  ::pread(fd, names, sizeof names - 1, static_cast<off_t>(sh[eh.e_shstrndx].sh_offset));
  for (const auto& s : sh)
    if (s.sh_name < sizeof names - 1 && std::strcmp(names + s.sh_name, wanted) == 0)
      return {s.sh_offset, s.sh_size};
  return {0, 0};
}

}  // namespace

std::vector<std::string> applet_table(std::string_view data) {
  // busybox keeps its applet names as one run of sorted NUL-terminated strings: "[", "[[", ...
  static constexpr std::string_view kStart("\0[\0[[\0", 6);
  std::vector<std::string> out;
  auto at = data.find(kStart);
  if (at == std::string_view::npos) return out;
  for (std::size_t i = at + 1; i < data.size() && data[i] != '\0';) {
    auto end = data.find('\0', i);
    if (end == std::string_view::npos) break;
    out.emplace_back(data.substr(i, end - i));
    i = end + 1;
  }
  return out;
}

std::vector<std::string> busybox_applets(const std::string& file) {
  UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return {};
  auto [offset, size] = elf_section(fd.get(), ".rodata");
  if (size == 0 || size > (16u << 20)) return {};
  std::string data(size, '\0');
  if (::pread(fd.get(), data.data(), size, static_cast<off_t>(offset)) !=
      static_cast<ssize_t>(size))
    return {};
  return applet_table(data);
}

bool reachable_by(const std::string& path, uid_t uid, const std::vector<gid_t>& gids) {
  std::string dir = path;
  while (dir.size() > 1) {
    dir = dir.substr(0, std::max<std::size_t>(dir.rfind('/'), 1));
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0) return true;  // not knowable: masked, as if reachable
    bool in_group = std::find(gids.begin(), gids.end(), st.st_gid) != gids.end();
    bool search =
        st.st_uid == uid || (st.st_mode & S_IXOTH) || (in_group && (st.st_mode & S_IXGRP));
    if (!search) return false;
  }
  return true;
}

std::vector<MountLine> parse_mountinfo(std::string_view text) {
  std::vector<MountLine> out;
  while (!text.empty()) {
    std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    auto f = fields(line);
    if (f.size() < 5) continue;
    auto colon = f[2].find(':');
    if (colon == std::string_view::npos) continue;
    unsigned major = 0, minor = 0;
    try {
      major = static_cast<unsigned>(std::stoul(std::string(f[2].substr(0, colon))));
      minor = static_cast<unsigned>(std::stoul(std::string(f[2].substr(colon + 1))));
    } catch (const std::exception&) {
      continue;
    }
    MountLine m{makedev(major, minor), unescape(f[3]), unescape(f[4])};
    if (m.root.empty() || m.root[0] != '/' || m.point.empty() || m.point[0] != '/') continue;
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<std::string> alias_paths(const std::vector<MountLine>& mounts, dev_t dev,
                                     const std::string& object) {
  // The mount that shows `object` here: the deepest mount point above it, of its file system.
  const MountLine* home = nullptr;
  for (const auto& m : mounts)
    if (m.dev == dev && is_within(object, m.point) &&
        (!home || m.point.size() >= home->point.size()))
      home = &m;
  if (!home) return {};
  std::string inner = home->root == "/" ? *rest_under(object, home->point)
                                        : home->root + *rest_under(object, home->point);
  if (inner.empty()) inner = "/";
  std::vector<std::string> out;
  for (const auto& m : mounts) {
    if (m.dev != dev || &m == home) continue;
    auto rest = rest_under(inner, m.root);
    if (!rest) continue;
    std::string alias = m.point == "/" ? (rest->empty() ? "/" : *rest) : m.point + *rest;
    if (alias != object && std::find(out.begin(), out.end(), alias) == out.end())
      out.push_back(alias);
  }
  return out;
}

void gather_masks(const Plan& plan, const Writable& writable, const std::string& program_search,
                  const AppletsOf& applets_of, HostView& view) {
  const auto& fsys = plan.policy.filesystem;
  add_blocked(fsys.blocked, writable, view);
  add_own_state(plan.protected_paths, writable, fsys.write_host, view);
  add_aliases(writable, view);
  add_blocked_programs(plan.policy.process.blocked_commands, program_search, writable.dirs,
                       applets_of ? applets_of : AppletsOf(busybox_applets), view);
}

std::vector<std::string> masked_for(const std::string& path, const HostView& view,
                                    const std::vector<std::string>& blocked,
                                    const AppletsOf& applets_of) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  auto same = [&](const HostPath& h) { return h.dev == st.st_dev && h.ino == st.st_ino; };
  auto it = std::find_if(view.blocked_exec.begin(), view.blocked_exec.end(), same);
  if (it == view.blocked_exec.end()) return {};
  const auto applets = applets_of ? applets_of(it->path) : busybox_applets(it->path);
  std::vector<std::string> names;
  for (const auto& name : blocked) {
    const std::string base = base_name(name);
    if (base == base_name(it->path) || base == base_name(path) ||
        std::find(applets.begin(), applets.end(), base) != applets.end())
      names.push_back(name);
  }
  return names;
}

}  // namespace cordon::landlock
