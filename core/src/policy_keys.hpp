// The one table of policy keys. The decoder's unknown-key check, type checks and value checks,
// the encoder behind `policy show`, and the JSON Schema are all driven by it.
#pragma once

#include <cordon/sdk/policy.hpp>

#include "policy_diagnostics.hpp"
#include "policy_node.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::detail {

/// One spelling of a shell mode (issue 5's aliases included).
struct ShellAlias {
  std::string_view name;
  ShellMode mode;
};
/// Every accepted spelling of process.shell; the canonical names come first per mode.
const std::vector<ShellAlias>& shell_aliases();

/// What a key holds; decides its checks and its JSON Schema.
enum class ValueKind {
  version,   ///< the format version, 1
  count,     ///< a positive integer within [min, max], or "unlimited"
  duration,  ///< "250ms" | "90s" | "5m" | "1h" | integer seconds, or "unlimited"
  boolean,
  text,           ///< a non-empty string
  home,           ///< private | host
  shell,          ///< a shell mode or alias
  read_paths,     ///< a list of paths or the string "host"
  paths,          ///< a list of paths
  programs,       ///< a list of program names or paths
  modules,        ///< a list of dotted Python module names
  ports,          ///< a list of TCP ports
  env_names,      ///< a list of environment variable names
  env_map,        ///< a table of environment variable name -> string
  backend_names,  ///< a list of backend names
  settings,       ///< a table of backend name -> settings table, checked by the plugins
};

class Decoder;

/// A key of the policy format: where it lives, what it holds, how to read and write it.
struct KeySpec {
  std::string_view section;  ///< "" for a top-level key
  std::string_view key;
  ValueKind kind;
  std::string_view description;
  std::int64_t min = 0;  ///< for count
  std::int64_t max = 0;  ///< for count
  /// Checks `value` and stores it in the policy; reports problems to the decoder.
  void (*decode)(const Node& value, Policy& policy, Decoder& decoder,
                 const KeySpec& spec) = nullptr;
  /// The key's value in `policy`, or nullopt when it is unset (an empty optional).
  std::optional<Node> (*encode)(const Policy& policy) = nullptr;

  /// "limits.memory_mb", or "version" for a top-level key.
  std::string dotted() const;
};

/// A table of the format ([limits], ...), in documentation order.
struct SectionSpec {
  std::string_view name;
  std::string_view description;
};

/// Every key, grouped by section in documentation order; top-level keys first.
const std::vector<KeySpec>& policy_keys();
/// The sections, in documentation order.
const std::vector<SectionSpec>& policy_sections();
/// The spec of `key` in `section` ("" for top level), or nullptr.
const KeySpec* find_key(std::string_view section, std::string_view key);

/// Type and value checks shared by the key specs; every problem goes to the diagnostics.
class Decoder {
 public:
  explicit Decoder(Diagnostics& diag) : diag_(diag) {}

  /// True for the string "unlimited", which every limit key takes.
  static bool unlimited(const Node& n);
  std::optional<std::uint64_t> count(const Node& n, const KeySpec& spec);
  std::optional<Duration> duration(const Node& n, const KeySpec& spec);
  std::optional<bool> boolean(const Node& n, const KeySpec& spec);
  std::optional<std::string> text(const Node& n, const KeySpec& spec);
  std::optional<ShellMode> shell(const Node& n, const KeySpec& spec);
  std::optional<HomeMode> home(const Node& n, const KeySpec& spec);
  /// A list of strings, each checked by the rule of `spec.kind`.
  std::optional<std::vector<std::string>> strings(const Node& n, const KeySpec& spec);
  std::optional<std::vector<std::uint16_t>> ports(const Node& n, const KeySpec& spec);
  std::optional<std::map<std::string, std::string>> env_map(const Node& n, const KeySpec& spec);
  std::optional<boost::json::object> settings(const Node& n, const KeySpec& spec);
  void version(const Node& n, const KeySpec& spec);

  /// CRD2004: "expected <what> for 'key', saw <describe(n)>".
  void wrong_type(const Node& n, const std::string& key, std::string_view what);
  /// CRD2005 at `n`.
  void bad_value(const Node& n, std::string message, std::string hint = {});

 private:
  bool string_ok(const Node& item, const KeySpec& spec);

  Diagnostics& diag_;
};

/// Decodes one file's tree (or a merged tree) onto `policy`: unknown keys, types and values are
/// checked against policy_keys(), every problem is reported to `diag`.
void decode_tree(const Node& root, Policy& policy, Diagnostics& diag);

/// Checks across keys of a decoded policy (contradictions), reporting CRD2006 to `diag` at the
/// locations recorded in policy.origins. `root` is the merged tree it was decoded from.
void check_contradictions(const Policy& policy, const Node& root, Diagnostics& diag);

/// What a valid policy holds that will likely not work as meant (CRD2017 warnings).
std::vector<Error> warnings_of(const Policy& policy);

/// Records in policy.origins where every key of the (merged) tree was written.
void record_origins(const Node& root, Policy& policy);

/// The tree of `policy`'s effective values (no `extends`), for serialisation.
Node encode_policy(const Policy& policy);

/// A string as a policy path: `~`, `~/x`, `{workspace}`, `{workspace}/x`, absolute or relative.
/// Returns the reason it is not, or nullopt when it is fine.
std::optional<std::string> path_problem(const std::string& path);

/// `path` lexically normalised as a string: no empty, `.` or resolvable `..` parts, no trailing
/// slash ("/a//b/../c/" -> "/a/c"). Touches no file.
std::string normal_path(std::string_view path);

/// True when the normal path `path` is `outer` or lies beneath it ("/" holds every absolute
/// path). Both as normal_path() gives them. Pure.
bool path_within(const std::string& path, const std::string& outer);

/// The name in `names` nearest to `key` (edit distance, ignoring case) when it is close enough
/// to be a typo of it: what "did you mean" suggests.
std::optional<std::string> nearest(std::string_view key, const std::vector<std::string>& names);

/// Boost.JSON value of a tree (backend settings) and back.
boost::json::value node_to_json(const Node& node);
Node json_to_node(const boost::json::value& value);

}  // namespace cordon::detail
