// Resolving container paths through the host mounts, and the blocked programs found there.
#include "mounted_programs.hpp"

#include <cordon/sdk/error.hpp>
#include <cordon/sdk/path_guard.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <filesystem>

namespace cordon::docker {

namespace {

constexpr int kMaxLinks = 40;  // the kernel's ELOOP limit

std::string normal(const std::string& path) {
  std::string out = std::filesystem::path(path).lexically_normal().string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

std::string join(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

std::string parent(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

// The components of `path` in reverse order, so that the next one is at the back.
std::vector<std::string> reversed_parts(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    auto end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (end > start) parts.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  std::reverse(parts.begin(), parts.end());
  return parts;
}

// A directory of the image on the way to a mount (e.g. /var above /var/tmp/ws).
bool above_a_mount(const std::vector<HostMount>& mounts, const std::string& path) {
  std::string prefix = path == "/" ? "/" : path + "/";
  return std::any_of(mounts.begin(), mounts.end(), [&prefix](const HostMount& m) {
    return normal(m.target).rfind(prefix, 0) == 0;
  });
}

bool add_once(std::vector<std::string>& list, const std::string& item) {
  if (std::find(list.begin(), list.end(), item) != list.end()) return false;
  list.push_back(item);
  return true;
}

Error unmaskable(const std::string& what) {
  return Error(code::kIsolationFailed, "process.blocked_commands cannot be enforced: " + what,
               "remove the link, or the name from process.blocked_commands");
}

// A program file in a mount: masked by its container path, and so is each of its other names
// (hard links) that a mount shows.
void add_mount_file(const ContainerPath& r, const std::vector<HostMount>& mounts,
                    MountedPrograms& out) {
  struct stat st {};
  if (::stat(r.host.c_str(), &st) != 0 || S_ISDIR(st.st_mode)) return;
  if (!add_once(out.masks, r.path)) return;
  std::vector<std::string> writable;
  for (const auto& m : mounts)
    if (m.writable) writable.push_back(normal(m.source));
  std::vector<BlockedPath> others;
  for (auto& name : other_names_to_mask(normal(r.host), writable).names)
    others.push_back({name, true});
  for (const auto& [target, dir] : masks_for(mounts, others)) add_once(out.masks, target);
}

}  // namespace

const HostMount* mount_holding(const std::vector<HostMount>& mounts, const std::string& path,
                               std::string& rest) {
  const HostMount* best = nullptr;
  std::size_t best_size = 0;
  for (const auto& m : mounts) {
    std::string target = normal(m.target);
    bool holds = path == target || (path.rfind(target == "/" ? "/" : target + "/", 0) == 0);
    if (!holds || (best && target.size() <= best_size)) continue;
    best = &m;
    best_size = target.size();
    rest = path.size() == target.size() ? std::string()
                                        : path.substr(target == "/" ? 0 : target.size());
  }
  return best;
}

ContainerPath resolve_in_container(const std::string& path, const std::vector<HostMount>& mounts) {
  ContainerPath out;
  std::vector<std::string> todo = reversed_parts(path);
  std::string current = "/";
  int links = 0;
  while (!todo.empty()) {
    std::string part = std::move(todo.back());
    todo.pop_back();
    if (part == ".") continue;
    if (part == "..") {
      current = parent(current);
      continue;
    }
    std::string next = join(current, part);
    std::string rest;
    const HostMount* m = mount_holding(mounts, next, rest);
    if (m == nullptr) {
      if (above_a_mount(mounts, next)) {
        current = next;
        continue;
      }
      // The image's from here on: the daemon's stat resolves the rest.
      for (auto it = todo.rbegin(); it != todo.rend(); ++it) next = join(next, *it);
      out.where = ContainerPath::Where::image;
      out.path = normal(next);
      return out;
    }
    out.via_mount = true;
    std::string host = m->source + rest;
    struct stat st {};
    // The mount's root is whatever the daemon bound (it follows a link in the source).
    if (rest.empty() ? ::stat(host.c_str(), &st) != 0 : ::lstat(host.c_str(), &st) != 0) return out;
    if (!rest.empty() && S_ISLNK(st.st_mode)) {
      if (++links > kMaxLinks) return out;  // ELOOP: nothing runs there
      char text[PATH_MAX];
      ssize_t n = ::readlink(host.c_str(), text, sizeof text - 1);
      if (n <= 0) return out;
      std::string link(text, static_cast<std::size_t>(n));
      for (auto& p : reversed_parts(link)) todo.push_back(std::move(p));
      if (link.front() == '/') current = "/";
      continue;
    }
    current = next;
  }
  std::string rest;
  const HostMount* m = mount_holding(mounts, current, rest);
  out.path = current;
  if (m != nullptr) {
    out.where = ContainerPath::Where::mount;
    out.host = m->source + rest;
  } else {
    out.where = ContainerPath::Where::image;
  }
  return out;
}

MountedPrograms mounted_programs(const std::vector<std::string>& candidates,
                                 const std::vector<HostMount>& mounts) {
  MountedPrograms out;
  for (const auto& c : candidates) {
    if (c.empty() || c.front() != '/') continue;
    ContainerPath r = resolve_in_container(c, mounts);
    if (r.where == ContainerPath::Where::mount) {
      add_mount_file(r, mounts, out);
    } else if (r.where == ContainerPath::Where::image && r.via_mount) {
      // A link in a mount to the image: the image's file under the same name is masked like the
      // image's own; another name must be a multi-call program that provides it (checked once
      // the image's are known).
      if (base_name(r.path) != base_name(c))
        out.foreign_links.emplace_back(c, r.path);
      else
        add_once(out.image_links, r.path);
    }
  }
  return out;
}

void check_foreign_links(const MountedPrograms& mounted, const ExecMasks& image) {
  for (const auto& [link, target] : mounted.foreign_links) {
    auto listed = [&target](const std::vector<std::string>& list) {
      return std::find(list.begin(), list.end(), target) != list.end();
    };
    if (!listed(image.multicall) && !listed(image.multicall_aliases))
      throw unmaskable("blocked program '" + link + "' is a link on a host mount to '" + target +
                       "' in the image, which does not provide it: masking it would block that "
                       "program under every name");
  }
}

void settle_image_masks(const std::vector<HostMount>& mounts, ExecMasks& image,
                        MountedPrograms& mounted) {
  std::vector<std::string> kept;
  auto settle = [&](const std::string& path, bool in_image) {
    std::string rest;
    if (mount_holding(mounts, path, rest) == nullptr) {
      if (in_image) add_once(kept, path);
      return;
    }
    ContainerPath r = resolve_in_container(path, mounts);
    if (r.where == ContainerPath::Where::mount) add_mount_file(r, mounts, mounted);
    if (r.where == ContainerPath::Where::image)
      throw unmaskable("blocked program '" + path +
                       "' is reached through links from the image to a host mount and back to '" +
                       r.path + "'");
  };
  for (const auto& f : image.files) settle(f, true);
  for (const auto& d : image.dangling) settle(d, false);
  image.files = std::move(kept);
}

}  // namespace cordon::docker
