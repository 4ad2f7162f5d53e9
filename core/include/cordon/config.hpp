// The operator's configuration file: plugin pinning, the default backend order and default
// backend settings.
//
//   [plugins]
//   allow = ["landlock", "docker"]        # only these backends may be used
//   sha256.landlock = "9f86d081..."       # the plugin file must have exactly this digest
//   [dispatch]
//   order = ["landlock", "docker"]        # tried in this order after the policy's prefer list
//   [backends.docker]                     # settings a policy's own [backends.docker] overrides
//   image = "python:3.11-slim"
//
// Read from `--config FILE`, else `$XDG_CONFIG_HOME/cordon/config.toml` when it exists, over
// cordon's shipped configuration (shipped_config_file()), which gives [dispatch] order when the
// operator's file does not. Nothing is pinned by default.
#pragma once

#include <cordon/sdk/error.hpp>
#include <cordon/sdk/export.hpp>

#include <boost/json/object.hpp>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cordon {

/// Which backends an operator allows, and which plugin files they trust.
struct CORDON_API PluginPins {
  /// nullopt: every backend may be used; otherwise only those named (the built-in `none`
  /// included).
  std::optional<std::vector<std::string>> allow;
  /// Backend name -> SHA-256 of its plugin file, 64 lowercase hex digits.
  std::map<std::string, std::string> sha256;

  /// True when `name` may be used.
  bool allows(const std::string& name) const;
  bool operator==(const PluginPins&) const = default;
};

/// The whole configuration file.
struct Config {
  PluginPins pins;
  boost::json::object backends;  ///< [backends.<name>] tables, as JSON objects
  /// [dispatch] order: the backends tried, in order, after a policy's backend.prefer (a remote
  /// one among them only when preferred). Never `none`, each name once.
  std::vector<std::string> dispatch_order;
  std::string dispatch_source;  ///< the file [dispatch] order came from; empty: not set
  std::string source;           ///< the file it came from; empty when none was read
};

/// `$XDG_CONFIG_HOME/cordon/config.toml`, or `~/.config/cordon/config.toml` without it.
CORDON_API std::filesystem::path default_config_path();

/// cordon's shipped configuration, installed with it (`<datadir>/cordon/defaults.toml`): the
/// build tree's copy for a core running from the build tree, else the one beside the core
/// library (a relocated install), else the install prefix's. Empty when none exists.
CORDON_API std::filesystem::path shipped_config_file();

/// Parses configuration text; `name` appears in messages. Throws ErrorList with every problem
/// (CRD2002 syntax, CRD2003 unknown key, CRD2004 wrong type, CRD2005 a bad [dispatch] order,
/// CRD3011 bad pin), each with file:line:col.
CORDON_API Config parse_config(const std::string& text, const std::string& name);

/// Reads and parses `file`. Throws ErrorList (CRD2001 when it cannot be read).
CORDON_API Config load_config_file(const std::filesystem::path& file);

/// `--config FILE` when given (it must exist), else the default file when it exists, else an
/// empty configuration; with the shipped configuration's [dispatch] order when that file sets
/// none. Throws ErrorList (also for a bad shipped file, naming it).
CORDON_API Config load_config(const std::optional<std::filesystem::path>& explicit_file);

}  // namespace cordon
