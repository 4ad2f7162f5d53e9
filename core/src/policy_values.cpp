// The Decoder's type and value checks: each one reads a node, or reports why it cannot.
#include "policy_keys.hpp"

#include <algorithm>
#include <limits>

namespace cordon::detail {

namespace {

bool is_env_name(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s)
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
      return false;
  return true;
}

bool is_backend_name(std::string_view s) {
  if (s.empty() || s[0] == '-' || s[0] == '_') return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) return false;
  return true;
}

// A dotted Python module name: "os", "urllib.request".
bool is_module_name(std::string_view s) {
  bool start = true;
  for (char c : s) {
    bool letter = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
    if (c == '.' && !start) {
      start = true;
    } else if (letter || (!start && c >= '0' && c <= '9')) {
      start = false;
    } else {
      return false;
    }
  }
  return !start;
}

bool has_control(std::string_view s) {
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) return true;
  return false;
}

std::string quote(std::string_view s) { return "'" + std::string(s) + "'"; }

}  // namespace

std::optional<std::string> path_problem(const std::string& path) {
  if (path.empty()) return "a path may not be empty";
  if (has_control(path)) return "a path may not contain control characters";
  if (path[0] == '~' && path != "~" && path.rfind("~/", 0) != 0)
    return "'~user' paths are not supported, only '~' and '~/...'";
  constexpr std::string_view kWorkspace = "{workspace}";
  std::size_t brace = path.find('{');
  if (brace == std::string::npos) return std::nullopt;
  bool leading = path.rfind(kWorkspace, 0) == 0 &&
                 (path.size() == kWorkspace.size() || path[kWorkspace.size()] == '/');
  if (!leading || path.find('{', 1) != std::string::npos)
    return "only '{workspace}' at the start of a path is expanded";
  return std::nullopt;
}

bool path_within(const std::string& path, const std::string& outer) {
  if (path == outer || outer == "/") return true;
  return path.size() > outer.size() && path.compare(0, outer.size(), outer) == 0 &&
         path[outer.size()] == '/';
}

std::string normal_path(std::string_view path) {
  const bool absolute = !path.empty() && path[0] == '/';
  std::vector<std::string_view> parts;
  for (std::size_t i = 0; i <= path.size();) {
    std::size_t j = std::min(path.find('/', i), path.size());
    std::string_view part = path.substr(i, j - i);
    if (part == "..") {
      if (!parts.empty() && parts.back() != "..") {
        parts.pop_back();
      } else if (!absolute) {
        parts.push_back(part);
      }
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    i = j + 1;
  }
  std::string out = absolute ? "/" : "";
  for (std::size_t k = 0; k < parts.size(); ++k) {
    if (k > 0) out += '/';
    out += parts[k];
  }
  return out.empty() ? "." : out;
}

void Decoder::wrong_type(const Node& n, const std::string& key, std::string_view what) {
  diag_.add(code::kWrongType,
            "expected " + std::string(what) + " for '" + key + "', saw " + describe(n), n.mark);
}

void Decoder::bad_value(const Node& n, std::string message, std::string hint) {
  diag_.add(code::kBadValue, std::move(message), n.mark, std::move(hint));
}

void Decoder::version(const Node& n, const KeySpec& spec) {
  if (n.type != NodeType::integer) return wrong_type(n, spec.dotted(), "the integer 1");
  if (n.integer != 1)
    diag_.add(code::kVersion,
              "unsupported policy version " + std::to_string(n.integer) +
                  " (this cordon reads version 1)",
              n.mark, "write version = 1, or use a cordon that reads this version");
}

bool Decoder::unlimited(const Node& n) {
  return n.type == NodeType::string && n.text == "unlimited";
}

std::optional<std::uint64_t> Decoder::count(const Node& n, const KeySpec& spec) {
  if (n.type != NodeType::integer) {
    wrong_type(n, spec.dotted(), "an integer or \"unlimited\"");
    return std::nullopt;
  }
  if (n.integer < spec.min) {
    bad_value(n,
              quote(spec.dotted()) + " must be at least " + std::to_string(spec.min) + ", saw " +
                  std::to_string(n.integer),
              "write \"unlimited\" to ask for no limit (leaving the key out keeps what the "
              "policy extends)");
    return std::nullopt;
  }
  if (n.integer > spec.max) {
    bad_value(n, quote(spec.dotted()) + " must be at most " + std::to_string(spec.max) + ", saw " +
                     std::to_string(n.integer));
    return std::nullopt;
  }
  return static_cast<std::uint64_t>(n.integer);
}

std::optional<Duration> Decoder::duration(const Node& n, const KeySpec& spec) {
  constexpr std::string_view kHint =
      "write a positive whole number followed by ms, s, m or h (\"90s\", \"5m\"), a number of "
      "seconds, or \"unlimited\"";
  if (n.type == NodeType::integer) {
    if (n.integer > 0 && n.integer <= std::numeric_limits<std::int64_t>::max() / 1000)
      return Duration(n.integer * 1000);
    bad_value(n, "invalid duration " + std::to_string(n.integer) + " for " + quote(spec.dotted()),
              std::string(kHint));
    return std::nullopt;
  }
  if (n.type != NodeType::string) {
    wrong_type(n, spec.dotted(), "a duration such as \"90s\", or \"unlimited\"");
    return std::nullopt;
  }
  if (auto d = parse_duration(n.text)) return d;
  bad_value(n, "invalid duration " + quote(n.text) + " for " + quote(spec.dotted()),
            std::string(kHint));
  return std::nullopt;
}

std::optional<bool> Decoder::boolean(const Node& n, const KeySpec& spec) {
  if (n.type == NodeType::boolean) return n.boolean;
  wrong_type(n, spec.dotted(), "true or false");
  return std::nullopt;
}

std::optional<std::string> Decoder::text(const Node& n, const KeySpec& spec) {
  if (n.type != NodeType::string) {
    wrong_type(n, spec.dotted(), "a string");
    return std::nullopt;
  }
  if (n.text.empty() || has_control(n.text)) {
    bad_value(n, quote(spec.dotted()) + " must be a non-empty line of text");
    return std::nullopt;
  }
  return n.text;
}

std::optional<ShellMode> Decoder::shell(const Node& n, const KeySpec& spec) {
  std::string word;
  switch (n.type) {
    case NodeType::string:
      word = n.text;
      break;
    case NodeType::boolean:
      word = n.boolean ? "true" : "false";
      break;
    case NodeType::integer:
      word = std::to_string(n.integer);
      break;
    case NodeType::null:
      break;
    default:
      wrong_type(n, spec.dotted(), "a shell mode");
      return std::nullopt;
  }
  if (auto mode = parse_shell_mode(word)) return mode;
  bad_value(n, "unknown shell mode " + quote(word) + " for " + quote(spec.dotted()),
            "use \"off\", \"sandboxed\" or \"unsafe\"");
  return std::nullopt;
}

std::optional<HomeMode> Decoder::home(const Node& n, const KeySpec& spec) {
  if (n.type != NodeType::string) {
    wrong_type(n, spec.dotted(), "\"private\" or \"host\"");
    return std::nullopt;
  }
  if (n.text == "private") return HomeMode::private_home;
  if (n.text == "host") return HomeMode::host;
  bad_value(n, "unknown home mode " + quote(n.text) + " for " + quote(spec.dotted()),
            "use \"private\" or \"host\"");
  return std::nullopt;
}

bool Decoder::string_ok(const Node& item, const KeySpec& spec) {
  const std::string& s = item.text;
  std::optional<std::string> problem;
  switch (spec.kind) {
    case ValueKind::paths:
    case ValueKind::read_paths:
      problem = path_problem(s);
      break;
    case ValueKind::programs:
      if (s.empty() || has_control(s))
        problem = "a program name may not be empty or hold control characters";
      break;
    case ValueKind::env_names:
      if (!is_env_name(s)) problem = "not a valid environment variable name";
      break;
    case ValueKind::modules:
      if (!is_module_name(s)) problem = "not a module name (letters, digits, '_' and '.')";
      break;
    case ValueKind::backend_names:
      if (!is_backend_name(s)) problem = "not a valid backend name (lowercase letters, digits, -)";
      break;
    default:
      break;
  }
  if (!problem) return true;
  bad_value(item, "invalid entry " + quote(s) + " in " + quote(spec.dotted()) + ": " + *problem);
  return false;
}

std::optional<std::vector<std::string>> Decoder::strings(const Node& n, const KeySpec& spec) {
  if (!n.is_array()) {
    wrong_type(n, spec.dotted(), "a list of strings");
    return std::nullopt;
  }
  std::vector<std::string> out;
  bool ok = true;
  for (const auto& item : n.items) {
    if (item.type != NodeType::string) {
      wrong_type(item, spec.dotted(), "a string");
      ok = false;
    } else if (string_ok(item, spec)) {
      out.push_back(item.text);
    } else {
      ok = false;
    }
  }
  return ok ? std::optional(std::move(out)) : std::nullopt;
}

std::optional<std::vector<std::uint16_t>> Decoder::ports(const Node& n, const KeySpec& spec) {
  if (!n.is_array()) {
    wrong_type(n, spec.dotted(), "a list of ports");
    return std::nullopt;
  }
  std::vector<std::uint16_t> out;
  bool ok = true;
  for (const auto& item : n.items) {
    if (item.type != NodeType::integer) {
      wrong_type(item, spec.dotted(), "a port number");
      ok = false;
    } else if (item.integer < 1 || item.integer > 65535) {
      bad_value(item, "port " + std::to_string(item.integer) + " in " + quote(spec.dotted()) +
                          " is outside 1-65535");
      ok = false;
    } else {
      out.push_back(static_cast<std::uint16_t>(item.integer));
    }
  }
  return ok ? std::optional(std::move(out)) : std::nullopt;
}

std::optional<std::map<std::string, std::string>> Decoder::env_map(const Node& n,
                                                                   const KeySpec& spec) {
  if (!n.is_table()) {
    wrong_type(n, spec.dotted(), "a table of strings");
    return std::nullopt;
  }
  std::map<std::string, std::string> out;
  bool ok = true;
  for (const auto& entry : n.entries) {
    if (!is_env_name(entry.key)) {
      diag_.add(
          code::kBadValue,
          "invalid environment variable name " + quote(entry.key) + " in " + quote(spec.dotted()),
          entry.key_mark, "names are letters, digits and '_', not starting with a digit");
      ok = false;
    } else if (entry.value.type != NodeType::string) {
      wrong_type(entry.value, spec.dotted() + "." + entry.key, "a string");
      ok = false;
    } else {
      out[entry.key] = entry.value.text;
    }
  }
  return ok ? std::optional(std::move(out)) : std::nullopt;
}

namespace {

// The first null in a settings tree (YAML `~` or an empty value) and its dotted key. TOML has no
// null, so a policy holding one could not be written out and read back the same.
const Node* find_null(const Node& n, const std::string& key, std::string& where) {
  if (n.type == NodeType::null) {
    where = key;
    return &n;
  }
  for (std::size_t i = 0; i < n.items.size(); ++i)
    if (auto* found = find_null(n.items[i], key + "[" + std::to_string(i) + "]", where))
      return found;
  for (const auto& e : n.entries)
    if (auto* found = find_null(e.value, key + "." + e.key, where)) return found;
  return nullptr;
}

}  // namespace

std::optional<boost::json::object> Decoder::settings(const Node& n, const KeySpec& spec) {
  if (!n.is_table()) {
    wrong_type(n, spec.dotted(), "a table of backend settings");
    return std::nullopt;
  }
  boost::json::object out;
  bool ok = true;
  for (const auto& entry : n.entries) {
    if (!is_backend_name(entry.key)) {
      diag_.add(code::kBadValue, "invalid backend name " + quote(entry.key) + " in 'backends'",
                entry.key_mark, "backend names are lowercase letters, digits, '-' and '_'");
      ok = false;
    } else if (!entry.value.is_table()) {
      wrong_type(entry.value, "backends." + entry.key, "a table");
      ok = false;
    } else if (std::string where;
               const Node* null = find_null(entry.value, "backends." + entry.key, where)) {
      bad_value(*null, "'" + where + "' has no value (null)",
                "give the setting a value, or remove the key to leave it unset");
      ok = false;
    } else {
      out[entry.key] = node_to_json(entry.value);
    }
  }
  return ok ? std::optional(std::move(out)) : std::nullopt;
}

}  // namespace cordon::detail
