// other_names_to_mask: the hard links of a blocked file, or of the files in a blocked directory,
// found where they can be, or a refusal.
#include <cordon/sdk/error.hpp>
#include <cordon/sdk/path_guard.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace cordon {

namespace {

bool within(const std::string& path, const std::string& dir) {
  if (dir == "/") return true;
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                         path[dir.size()] == '/');
}

std::string join(const std::string& dir, const char* name) {
  return dir == "/" ? "/" + std::string(name) : dir + "/" + name;
}

void add_once(std::vector<std::string>& list, std::string item) {
  if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(std::move(item));
}

// A file with more than one name, and the names of it found so far.
struct Linked {
  nlink_t links = 1;
  std::vector<std::string> names;
};
using Identity = std::pair<dev_t, ino_t>;

// Every entry of `dir` (not beneath it) that is one of the `linked` files.
void find_in(const std::string& dir, std::map<Identity, Linked>& linked) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  while (auto* e = ::readdir(d)) {
    if (e->d_type != DT_REG && e->d_type != DT_UNKNOWN) continue;
    // d_ino sieves (a stat of every entry of /usr/bin would cost milliseconds a run); the
    // entry's own stat confirms. A file system whose d_ino differs hides a name: refused then.
    if (std::none_of(linked.begin(), linked.end(),
                     [&](const auto& l) { return l.first.second == e->d_ino; }))
      continue;
    struct stat here {};
    if (::fstatat(::dirfd(d), e->d_name, &here, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(here.st_mode))
      continue;
    auto it = linked.find({here.st_dev, here.st_ino});
    if (it != linked.end()) add_once(it->second.names, join(dir, e->d_name));
  }
  ::closedir(d);
}

// The files beneath `dir` with more than one name, at most `budget` entries looked at.
void walk(const std::string& dir, std::map<Identity, Linked>& linked, std::size_t& budget,
          bool& complete) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  while (auto* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == ".." || e->d_type == DT_LNK) continue;
    if (budget == 0) {
      complete = false;
      break;
    }
    --budget;
    struct stat st {};
    if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      walk(join(dir, e->d_name), linked, budget, complete);
    } else if (S_ISREG(st.st_mode) && st.st_nlink > 1) {
      auto& l = linked[{st.st_dev, st.st_ino}];
      l.links = st.st_nlink;
      add_once(l.names, join(dir, e->d_name));
    }
  }
  ::closedir(d);
}

[[noreturn]] void refuse(const std::string& message, const std::string& file) {
  throw Error(code::kUnmaskableName, message,
              "remove the other links (find / -xdev -samefile '" + file +
                  "' lists them), or block a directory that holds the file and every link");
}

}  // namespace

BlockedName blocked_name_of(const struct stat& st, const std::vector<std::string>& blocked,
                            std::size_t limit) {
  BlockedName out;
  if (!S_ISREG(st.st_mode) || st.st_nlink < 2) return out;
  const Identity wanted{st.st_dev, st.st_ino};
  for (const auto& path : blocked) {
    struct stat b {};
    if (::lstat(path.c_str(), &b) != 0) continue;
    std::map<Identity, Linked> linked;
    if (S_ISDIR(b.st_mode)) {
      std::size_t budget = limit;
      walk(path, linked, budget, out.looked_all);
    } else if (Identity{b.st_dev, b.st_ino} == wanted) {
      linked[wanted] = {};
    }
    if (linked.count(wanted) != 0) {
      out.path = path;
      return out;
    }
  }
  return out;
}

std::string unwalked_note(const std::string& path) {
  return "blocked directory '" + path +
         "' holds too many entries to check each file for other names (hard links): those "
         "beyond the first " +
         std::to_string(kOtherNamesWalk) + " were not";
}

OtherNames other_names_to_mask(const std::string& path, const std::vector<std::string>& writable,
                               std::size_t limit) {
  OtherNames out;
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return out;
  std::map<Identity, Linked> linked;
  if (S_ISREG(st.st_mode) && st.st_nlink > 1) {
    linked[{st.st_dev, st.st_ino}] = {st.st_nlink, {path}};
    find_in(path.substr(0, std::max<std::size_t>(path.rfind('/'), 1)), linked);
  } else if (S_ISDIR(st.st_mode)) {
    walk(path, linked, limit, out.walked_all);
  }
  if (linked.empty()) return out;
  for (const auto& w : writable) find_in(w, linked);
  for (const auto& [id, l] : linked) {
    const std::string& file = l.names.front();
    for (const auto& name : l.names) {
      if (within(name, path)) continue;  // the mask on `path` covers it
      for (const auto& w : writable)
        if (within(name, w))
          refuse("blocked file '" + file + "' has a hard link '" + name + "' in the writable '" +
                     w + "', where a mask could be raced",
                 file);
      add_once(out.names, name);
    }
    if (l.names.size() < l.links)
      refuse("blocked file '" + file + "' has " + std::to_string(l.links) +
                 " names (hard links) and cordon found " + std::to_string(l.names.size()) +
                 ": the others cannot be masked",
             file);
  }
  return out;
}

}  // namespace cordon
