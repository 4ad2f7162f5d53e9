// Loading one plugin: pins are checked before any of its code runs, the info record before its
// factory is trusted, and the library is never unloaded.
#include "plugin_loader.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cordon/load_hook.hpp>
#include <cordon/registry.hpp>
#include <cordon/sdk/version.hpp>

#include <algorithm>
#include <boost/dll/shared_library.hpp>
#include <cerrno>
#include <cstring>
#include <vector>

#include "discovery.hpp"
#include "private_dir_rule.hpp"
#include "sha256.hpp"

namespace cordon::detail {

namespace fs = std::filesystem;

namespace {

constexpr const char* kInfoSymbol = "cordon_plugin_info";
constexpr const char* kFactorySymbol = "cordon_plugin_create";

// Backends, their vtables and any static state live in the library: keep every one loaded for
// the life of the process, whatever happens to the registry that loaded it.
void keep_forever(boost::dll::shared_library lib) {
  static auto* libs = new std::vector<boost::dll::shared_library>();
  libs->push_back(std::move(lib));
}

template <std::size_t N>
std::string field(const char (&text)[N]) {
  return std::string(text, strnlen(text, N));
}

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

std::optional<Error> check_allowed(const fs::path& path, const std::string& name,
                                   const PluginPins& pins) {
  if (pins.allows(name)) return std::nullopt;
  return Error(code::kPluginNotAllowed,
               "plugin " + quoted(path) + " (backend '" + name + "') is not on the allow list",
               "add '" + name + "' to [plugins] allow in the cordon configuration to use it");
}

// A plugin's code runs as cordon's user (root, often): only a file that user or root alone
// could have written, in directories only they could change, is loaded. Checked on the path
// with every symlink resolved, from the file up to "/", and `real` is that path: the loader
// opens it, not the path given, whose symlinks another user might swap after the check.
std::optional<Error> check_trusted(const fs::path& path, fs::path& real) {
  std::error_code ec;
  real = fs::canonical(path, ec);
  if (ec) {
    real = path;
    return std::nullopt;  // the load itself says why it cannot open it
  }
  const uid_t me = ::geteuid();
  for (fs::path p = real;; p = p.parent_path()) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) break;
    if (auto why = untrusted_reason(st.st_uid, st.st_mode, me, Trust::ancestor))
      return Error(code::kUntrustedState,
                   "plugin " + quoted(path) + " is not loaded: '" + p.string() + "' " + *why,
                   "a plugin and each directory above it must be root's or cordon's user's and "
                   "writable by no one else: fix the owner or mode, or install it where they are");
    if (p == p.parent_path()) break;
  }
  return std::nullopt;
}

// Hashes the open file and, when it matches, returns the descriptor to load from, so that the
// file checked is the file loaded even if the path is replaced in between.
std::optional<Error> check_digest(const fs::path& path, const std::string& name,
                                  const std::string& expected, int& fd) {
  fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  std::string why;
  std::optional<std::string> actual;
  if (fd < 0) {
    why = std::strerror(errno);
  } else {
    actual = sha256_fd(fd, why);
  }
  if (actual && *actual == expected) return std::nullopt;
  if (fd >= 0) ::close(fd);
  fd = -1;
  if (!actual) return Error(code::kPluginDigest, "cannot hash plugin " + quoted(path) + ": " + why);
  return Error(code::kPluginDigest,
               "plugin " + quoted(path) + " has SHA-256 '" + *actual + "' but '" + name +
                   "' is pinned to '" + expected + "'",
               "reinstall the plugin or update sha256." + name + " in the cordon configuration");
}

std::string load_error_text(const fs::path& loaded_as, const fs::path& path) {
  const char* why = dlerror();
  std::string text = why ? why : "unknown dynamic loader error";
  // The message names the file first; the caller already does.
  for (const auto& name : {loaded_as.string(), path.string()})
    if (text.rfind(name + ": ", 0) == 0) text.erase(0, name.size() + 2);
  return text;
}

std::optional<Error> open_library(const fs::path& path, int fd, boost::dll::shared_library& lib) {
  fs::path load_as = path;
  if (fd >= 0 && fs::exists("/proc/self/fd/" + std::to_string(fd)))
    load_as = "/proc/self/fd/" + std::to_string(fd);
  boost::dll::fs::error_code ec;
  lib.load(boost::dll::fs::path(load_as.string()), boost::dll::load_mode::rtld_now, ec);
  std::optional<Error> failed;
  if (ec || !lib.is_loaded())
    failed = Error(code::kPluginLoad,
                   "cannot load plugin " + quoted(path) + ": " + load_error_text(load_as, path),
                   "rebuild or remove the plugin file");
  if (fd >= 0) ::close(fd);
  return failed;
}

// The size the library gives its info record: a record of another layout is refused before
// any field but the ABI version is read.
std::optional<Error> check_record_size(const void* record, const fs::path& path) {
  Dl_info info{};
  void* extra = nullptr;
  if (::dladdr1(record, &info, &extra, RTLD_DL_SYMENT) == 0 || !extra) return std::nullopt;
  const auto* sym = static_cast<const ElfW(Sym)*>(extra);
  if (sym->st_size == sizeof(PluginInfo)) return std::nullopt;
  if (sym->st_size >= sizeof(std::uint32_t) &&
      static_cast<const PluginInfo*>(record)->abi_version != CORDON_PLUGIN_ABI)
    return std::nullopt;  // check_info names the ABI versions, which says more
  return Error(code::kPluginAbi,
               "plugin " + quoted(path) + " has a " + std::to_string(sym->st_size) +
                   "-byte info record but this cordon expects " +
                   std::to_string(sizeof(PluginInfo)) + " bytes",
               "rebuild the plugin against the SDK of cordon " CORDON_VERSION);
}

}  // namespace

std::optional<Error> check_info(const PluginInfo& info, const std::string& name,
                                const fs::path& path) {
  auto core = core_identity();
  if (info.abi_version != core.abi_version)
    return Error(code::kPluginAbi,
                 "plugin " + quoted(path) + " was built for plugin ABI " +
                     std::to_string(info.abi_version) + " but this cordon needs plugin ABI " +
                     std::to_string(core.abi_version),
                 "rebuild the plugin against the SDK of cordon " CORDON_VERSION);
  std::string toolchain = field(info.toolchain);
  if (toolchain != core.toolchain)
    return Error(code::kPluginToolchain,
                 "plugin " + quoted(path) + " was built with '" + toolchain +
                     "' but this cordon was built with '" + core.toolchain + "'",
                 "rebuild the plugin with the same compiler, standard library, Boost and SDK");
  std::string own_name = field(info.name);
  if (own_name != name)
    return Error(code::kPluginName,
                 "plugin " + quoted(path) + " calls itself '" + own_name +
                     "' but its file name says '" + name + "'",
                 "rename the file to '" + plugin_file_name(own_name) + "'");
  if (info.locality != Locality::local && info.locality != Locality::remote)
    return Error(code::kPluginAbi,
                 "plugin " + quoted(path) + " declares locality " +
                     std::to_string(static_cast<std::uint32_t>(info.locality)) +
                     ", which this cordon does not know (0 local, 1 remote)",
                 "rebuild the plugin against the SDK of cordon " CORDON_VERSION);
  return std::nullopt;
}

LoadOutcome load_plugin(const fs::path& path, const std::string& name, const PluginPins& pins) {
  detail::before_load(path);
  LoadOutcome out;
  if ((out.error = check_allowed(path, name, pins))) return out;
  fs::path real;
  if ((out.error = check_trusted(path, real))) return out;
  int fd = -1;
  if (auto pin = pins.sha256.find(name); pin != pins.sha256.end())
    if ((out.error = check_digest(real, name, pin->second, fd))) return out;
  boost::dll::shared_library lib;
  if ((out.error = open_library(real, fd, lib))) return out;
  std::vector<std::string> missing;
  for (const char* sym : {kInfoSymbol, kFactorySymbol})
    if (!lib.has(sym)) missing.push_back(std::string("'") + sym + "'");
  if (!missing.empty()) {
    std::string list = missing.size() == 2 ? missing[0] + " and " + missing[1] : missing[0];
    out.error = Error(
        code::kPluginSymbol, "plugin " + quoted(path) + " does not export " + list,
        "a plugin's entry.cpp must use CORDON_BACKEND_PLUGIN(Class, name, version, locality)");
  } else {
    const auto& info = lib.get<const PluginInfo>(kInfoSymbol);
    if (!(out.error = check_record_size(&info, path)) &&
        !(out.error = check_info(info, name, path))) {
      out.plugin = LoadedPlugin{field(info.version), field(info.toolchain), info.locality,
                                lib.get<PluginFactory*>(kFactorySymbol)};
    }
  }
  keep_forever(std::move(lib));
  return out;
}

std::unique_ptr<Backend> create_backend(PluginFactory* factory, const BackendContext& context,
                                        std::optional<Error>& error) {
  std::string why;
  std::unique_ptr<Backend> backend;
  try {
    if (factory) backend = factory(context, why);
  } catch (const std::exception& e) {
    why = std::string("threw: ") + e.what();
  } catch (...) {
    why = "threw an unknown exception";
  }
  if (backend) return backend;
  error = Error(code::kPluginFactory,
                "plugin of backend '" + context.name + "' could not create its backend: " +
                    (why.empty() ? "the factory returned nothing" : why),
                "run with --log-level debug for the plugin's own messages");
  return nullptr;
}

}  // namespace cordon::detail
