// The plugin search path and directory scanning, and where cordon's shipped configuration is:
// both found from the core library's location. No plugin code is loaded here.
#include "discovery.hpp"

#include <cordon/config.hpp>
#include <cordon/load_hook.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>

namespace cordon::detail {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kPrefix = "cordon-backend-";
constexpr std::string_view kSuffix = ".so";

void add_dir(std::vector<SearchDir>& out, const fs::path& p, const char* origin, bool must_exist) {
  if (p.empty()) return;
  fs::path norm = p.lexically_normal();
  if (!norm.has_filename() && norm.has_parent_path()) norm = norm.parent_path();  // "a/b/"
  for (const auto& d : out)
    if (d.path == norm) return;  // the same directory twice would shadow itself
  out.push_back({norm, origin, must_exist});
}

// The directory holding libcordon-core itself, found through one of its own symbols.
std::optional<fs::path> find_core_library() {
  fs::path file = code_file(reinterpret_cast<const void*>(&plugin_file_name));
  if (file.empty()) return std::nullopt;
  // Linked into the executable (cordon's front end, in <prefix>/bin): the core's directory
  // is the library directory beside it, where libcordon-core is installed.
  std::error_code ec;
  if (file == fs::read_symlink("/proc/self/exe", ec))
    file = file.parent_path() / CORDON_LIBDIR_FROM_BIN / "libcordon-core.so";
  fs::path p = fs::weakly_canonical(file, ec);
  if (ec) return std::nullopt;
  return p;
}

// Looked up once: the code does not move while it runs, and a run asks twice (the shipped
// configuration and the plugin search path), each a dozen system calls.
std::optional<fs::path> core_library_path() {
  static const std::optional<fs::path> path = find_core_library();
  return path;
}

}  // namespace

std::optional<std::string> backend_name_of(const std::string& file_name) {
  if (file_name.size() <= kPrefix.size() + kSuffix.size()) return std::nullopt;
  if (file_name.compare(0, kPrefix.size(), kPrefix) != 0) return std::nullopt;
  if (file_name.compare(file_name.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0)
    return std::nullopt;
  return file_name.substr(kPrefix.size(), file_name.size() - kPrefix.size() - kSuffix.size());
}

std::string plugin_file_name(const std::string& name) {
  return std::string(kPrefix) + name + std::string(kSuffix);
}

std::vector<SearchDir> build_search_path(const SearchInputs& in) {
  std::vector<SearchDir> out;
  for (const auto& d : in.plugin_dirs) add_dir(out, d, "--plugin-dir", true);
  if (in.env_path) {
    std::string_view rest = *in.env_path;
    while (!rest.empty()) {
      auto colon = rest.find(':');
      auto part = rest.substr(0, colon);
      if (!part.empty()) add_dir(out, fs::path(part), "CORDON_PLUGIN_PATH", true);
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  if (in.library_dir) add_dir(out, *in.library_dir, "next to libcordon-core", false);
  if (in.install_dir) add_dir(out, *in.install_dir, "install prefix", false);
  if (in.build_dir) add_dir(out, *in.build_dir, "build tree", false);
  return out;
}

SearchInputs gather_search_inputs(const RegistryOptions& options, bool default_dirs) {
  SearchInputs in;
  for (const auto& d : options.plugin_dirs) in.plugin_dirs.push_back(fs::absolute(d));
  if (options.use_environment)
    if (const char* env = std::getenv("CORDON_PLUGIN_PATH")) in.env_path = env;
  if (!options.use_default_dirs || !default_dirs) return in;
  auto lib = core_library_path();
  const fs::path build_plugins = CORDON_BUILD_PLUGIN_DIR;
  // A build-tree core finds the build tree's plugins; an installed one never does.
  std::error_code ec;
  if (lib && fs::equivalent(lib->parent_path(), CORDON_BUILD_CORE_DIR, ec)) {
    in.build_dir = build_plugins;
  } else if (lib) {
    in.library_dir = lib->parent_path() / "cordon" / "plugins";
  }
  fs::path install = CORDON_INSTALL_PLUGIN_DIR;
  in.install_dir = install.is_absolute() ? install : fs::path(CORDON_INSTALL_PREFIX) / install;
  return in;
}

}  // namespace cordon::detail

namespace cordon {

// Where the plugins are found, beside the core library; nowhere else in a build tree, so that a
// build-tree cordon never reads an installed cordon's defaults.
std::filesystem::path shipped_config_file() {
  namespace fs = std::filesystem;
  auto lib = detail::core_library_path();
  std::error_code ec;
  fs::path candidates[2];
  if (lib && fs::equivalent(lib->parent_path(), CORDON_BUILD_CORE_DIR, ec)) {
    candidates[0] = CORDON_BUILD_SHIPPED_CONFIG;
  } else {
    if (lib) candidates[0] = lib->parent_path() / CORDON_SHIPPED_CONFIG_FROM_LIB;
    fs::path install = CORDON_INSTALL_SHIPPED_CONFIG;
    candidates[1] = install.is_absolute() ? install : fs::path(CORDON_INSTALL_PREFIX) / install;
  }
  for (const auto& c : candidates)
    if (!c.empty() && fs::is_regular_file(c, ec)) return c.lexically_normal();
  return {};
}

}  // namespace cordon

namespace cordon::detail {

ScanResult scan_dir(const SearchDir& dir) {
  ScanResult out;
  std::error_code ec;
  fs::directory_iterator it(dir.path, ec);
  if (ec) {
    bool missing = ec == std::errc::no_such_file_or_directory;
    if (!missing || dir.must_exist) {
      out.diagnostics.push_back({missing ? Diagnostic::Level::warning : Diagnostic::Level::error,
                                 Error(code::kPluginDir,
                                       "cannot read plugin directory '" + dir.path.string() +
                                           "' (" + dir.origin + "): " + ec.message(),
                                       "check the path given to " + dir.origin),
                                 dir.path});
    }
    return out;
  }
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) break;
    auto name = backend_name_of(it->path().filename().string());
    if (!name) continue;
    std::error_code st;
    if (!fs::is_regular_file(it->path(), st)) continue;
    if (!valid_backend_name(*name)) {
      out.diagnostics.push_back(
          {Diagnostic::Level::error,
           Error(code::kPluginName,
                 "plugin file '" + it->path().string() + "' does not name a valid backend",
                 "a backend name is 1 to 31 of a-z, 0-9, '_' and '-'"),
           it->path()});
      continue;
    }
    out.files.push_back({*name, it->path()});
  }
  std::sort(out.files.begin(), out.files.end(),
            [](const FoundFile& a, const FoundFile& b) { return a.name < b.name; });
  return out;
}

std::optional<fs::path> plugin_in_dir(const SearchDir& dir, const std::string& name) {
  fs::path p = dir.path / plugin_file_name(name);
  std::error_code ec;
  if (fs::is_regular_file(p, ec)) return p;
  return std::nullopt;
}

}  // namespace cordon::detail
