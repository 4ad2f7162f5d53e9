// The process's load hook (cordon/load_hook.hpp).
#include <cordon/load_hook.hpp>

#include <dlfcn.h>
#include <link.h>
#include <sys/auxv.h>

namespace cordon {

namespace {

LoadHook g_hook = nullptr;

// Read once: the running image does not change, whatever happens to its file's name.
std::filesystem::path own_executable() {
  static const std::filesystem::path self = [] {
    std::error_code ec;
    auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::filesystem::path() : path;
  }();
  return self;
}

}  // namespace

void set_load_hook(LoadHook hook) { g_hook = hook; }

std::filesystem::path code_file(const void* address) {
  // A static executable (no program interpreter) holds all the code there is; its loader
  // keeps no map for dladdr to search.
  if (::getauxval(AT_BASE) == 0) return address ? own_executable() : std::filesystem::path();
  Dl_info info{};
  link_map* map = nullptr;
  if (::dladdr1(address, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) == 0) return {};
  if (map && map->l_name && *map->l_name) return map->l_name;
  return own_executable();
}

namespace detail {
void before_load(const std::filesystem::path& file) {
  if (g_hook) g_hook(file);
}
}  // namespace detail

}  // namespace cordon
