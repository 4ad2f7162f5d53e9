// What a job's supervisor runs, handed over by the cordon that starts it (internal).
//
// The supervisor never reads its job from a file: a sandboxed job that could write the job
// directory (or the configuration, or a plugin directory) would otherwise choose the policy,
// the plugins or the settings of the next job before its supervisor read them. The starting
// cordon serialises the whole job — the effective policy, argv, environment, workspace,
// backend, plugin directories, the configuration's pins and backend settings, stdin — into a
// memory file that it seals against any change and leaves open as descriptor kSpecFd of the
// supervisor. The files in the job directory are for display only.
#pragma once

#include <cordon/config.hpp>
#include <cordon/sdk/export.hpp>
#include <cordon/sdk/private_dir.hpp>

#include <boost/json/object.hpp>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cordon::detail {

/// The descriptor the supervisor finds its spec on.
inline constexpr int kSpecFd = 3;

/// Everything a supervisor needs to run its job.
struct SupervisorSpec {
  std::filesystem::path state_dir;  ///< the job state directory (the supervisor verifies it)
  std::string id;
  std::string policy_toml;  ///< the effective policy, paths resolved
  std::vector<std::string> argv;
  std::filesystem::path workspace;
  std::filesystem::path host_home;
  std::string backend;                     ///< chosen at start
  std::map<std::string, std::string> env;  ///< env.pass values, as the starting caller had them
  std::optional<std::string> stdin_data;
  bool shell_unsafe = false;
  std::vector<std::filesystem::path> plugin_dirs;  ///< absolute
  PluginPins pins;
  boost::json::object config_backends;                 ///< [backends] of the configuration
  std::vector<std::filesystem::path> protected_paths;  ///< beyond the defaults (runner.hpp)
};

/// The spec as JSON text, and back. decode throws Error CRD6004 on anything malformed. Pure.
CORDON_API std::string encode_spec(const SupervisorSpec& spec);
CORDON_API SupervisorSpec decode_spec(const std::string& text);

/// A memory file holding `data`, sealed against writing, growing, shrinking and further
/// sealing. Throws Error CRD6003.
CORDON_API OwnedFd sealed_memfd(const std::string& data);

/// The contents of `fd`, which must be such a sealed memory file. Throws Error CRD6004.
CORDON_API std::string read_sealed(int fd);

}  // namespace cordon::detail
