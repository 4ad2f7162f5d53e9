// The applet cache: one small file per program identity, written atomically.
#include "applet_cache.hpp"

#include <cordon/sdk/error.hpp>
#include <cordon/sdk/private_dir.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>

#include "host_masks.hpp"

namespace cordon::landlock {

namespace {

// 64-bit FNV-1a as 16 hex digits: a short file name for a key.
std::string short_name(const std::string& key) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : key) h = (h ^ c) * 0x100000001b3ULL;
  char out[32];
  std::snprintf(out, sizeof out, "applets-%016llx", static_cast<unsigned long long>(h));
  return out;
}

// The non-empty lines of `text` after the first `skip` (a string stream took four times as
// long for busybox's 400 names, on every run with a blocked command).
std::vector<std::string> lines(std::string_view text, std::size_t skip) {
  std::vector<std::string> out;
  out.reserve(static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1);
  for (std::size_t i = 0; !text.empty(); ++i) {
    const std::size_t end = std::min(text.find('\n'), text.size());
    if (i >= skip && end > 0) out.emplace_back(text.substr(0, end));
    text.remove_prefix(std::min(end + 1, text.size()));
  }
  return out;
}

// The names through the state directory's file for `key`, read from the program when absent.
std::vector<std::string> stored(const std::filesystem::path& state_dir, const std::string& file,
                                const std::string& key) {
  std::string name = short_name(key);
  try {
    if (auto dir = PrivateDir::open(state_dir))
      if (auto text = dir->read_file(name, 1 << 20); text && text->rfind(key + "\n", 0) == 0)
        return lines(*text, 1);
    auto applets = busybox_applets(file);
    std::string text = key + "\n";
    for (const auto& a : applets) text += a + "\n";
    PrivateDir::create(state_dir).write_file(name, text);
    return applets;
  } catch (const Error&) {
    return busybox_applets(file);  // the cache is only a saving
  }
}

// What one lookup remembers: the names last read, by key. In a long-lived process (a server,
// the C++ API) a run then looks them up with a stat instead of a read of the state directory or
// of the program.
struct Memo {
  static constexpr std::size_t kSize = 16;
  std::mutex mutex;
  std::map<std::string, std::vector<std::string>> names;

  template <class Read>
  std::vector<std::string> get(const std::string& key, Read read) {
    {
      std::lock_guard lock(mutex);
      if (auto it = names.find(key); it != names.end()) return it->second;
    }
    auto applets = read();
    std::lock_guard lock(mutex);
    if (names.size() >= kSize) names.clear();
    names[key] = applets;
    return applets;
  }
};

std::vector<std::string> lookup(Memo& memo, const std::filesystem::path& state_dir,
                                const std::string& file) {
  std::string key = applet_key(file);
  if (key.empty()) return busybox_applets(file);
  if (state_dir.empty()) return memo.get(key, [&] { return busybox_applets(file); });
  return memo.get(key, [&] { return stored(state_dir, file, key); });
}

}  // namespace

std::string applet_key(const std::string& file) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return {};
  return file + " " + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + " " +
         std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec) + " " + std::to_string(st.st_ctim.tv_sec) + "." +
         std::to_string(st.st_ctim.tv_nsec);
}

AppletLookup cached_applets(std::filesystem::path state_dir) {
  return [dir = std::move(state_dir), memo = std::make_shared<Memo>()](const std::string& file) {
    return lookup(*memo, dir, file);
  };
}

}  // namespace cordon::landlock
