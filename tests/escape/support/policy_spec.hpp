// Policies written by the escape tests, rendered as TOML in cordon's policy format. A field left
// unset is not written, so that a policy that `extends` a preset inherits it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace escape {

/// One test's policy.
struct PolicySpec {
  std::string name = "escape";
  std::optional<std::string> extends;
  /// [limits], each value already TOML ("64", "\"2s\"").
  std::map<std::string, std::string> limits;
  std::optional<std::vector<std::string>> read;  ///< filesystem.read as a list
  bool read_host = false;                        ///< filesystem.read = "host" (wins over read)
  std::optional<std::vector<std::string>> write;
  std::optional<std::vector<std::string>> blocked;
  std::optional<std::string> home;  ///< filesystem.home: "private" or "host"
  std::optional<bool> net_allow;
  std::optional<std::vector<int>> connect_ports;
  std::optional<std::vector<int>> bind_ports;
  std::optional<std::vector<std::string>> blocked_commands;
  std::optional<std::vector<std::string>> allowed_commands;
  std::optional<bool> allow_subprocess;
  std::map<std::string, std::string> env_set;
  std::optional<std::vector<std::string>> env_pass;

  /// The TOML text of this policy.
  std::string toml() const;
};

/// The read set of the `standard` preset plus the probe directory.
std::vector<std::string> base_read();

/// A complete policy with no resource limit but a 60 s timeout: reads base_read() plus the
/// scratch tree's listed/ and ro/, writes the workspace, network denied. Limits that an
/// unprivileged caller cannot have proven (memory) are absent unless a test adds them.
PolicySpec confined(const std::string& scratch_root);

/// Renders a string as a TOML basic string.
std::string toml_string(const std::string& s);

/// Renders a duration for [limits] timeout.
std::string toml_duration(const std::string& text);

}  // namespace escape
