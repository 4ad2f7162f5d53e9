// Policy -> text: the effective policy as a TOML or YAML policy file. The policy is first encoded
// into the tree by the key table, then the tree is written in the chosen syntax.
#include <cordon/policy_io.hpp>

#include "policy_emit.hpp"
#include "policy_keys.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace cordon {

namespace detail {

Node encode_policy(const Policy& policy) {
  Node root = make_table();
  for (const auto& spec : policy_keys()) {
    std::optional<Node> value = spec.encode(policy);
    if (!value) continue;
    if (spec.section.empty()) {
      root.set(std::string(spec.key), std::move(*value));
      continue;
    }
    Node* section = root.find(spec.section);
    if (!section) section = &root.set(std::string(spec.section), make_table());
    section->set(std::string(spec.key), std::move(*value));
  }
  return root;
}

std::string number_text(double value, bool yaml) {
  if (std::isnan(value)) return yaml ? ".nan" : "nan";
  if (std::isinf(value)) return std::string(value < 0 ? "-" : "") + (yaml ? ".inf" : "inf");
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, value);
  std::string out(buf, res.ptr);
  // Keep it a float when read back: "1" would be an integer.
  if (out.find_first_of(".e") == std::string::npos) out += ".0";
  return out;
}

std::string quoted_string(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

}  // namespace detail

namespace {

using detail::Node;
using detail::NodeType;

bool is_bare_key(std::string_view key) {
  if (key.empty()) return false;
  for (char c : key)
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '-'))
      return false;
  return true;
}

std::string key_text(std::string_view key) {
  return is_bare_key(key) ? std::string(key) : detail::quoted_string(key);
}

// YAML reads some plain keys as null, booleans or numbers; those are quoted.
std::string yaml_key(std::string_view key) {
  static const std::string_view kReserved[] = {"null", "Null",  "NULL",  "true",  "True",
                                               "TRUE", "false", "False", "FALSE", "y",
                                               "n",    "yes",   "no",    "on",    "off"};
  bool plain = is_bare_key(key) && !(key[0] >= '0' && key[0] <= '9') && key[0] != '-';
  for (auto r : kReserved) plain = plain && key != r;
  return plain ? std::string(key) : detail::quoted_string(key);
}

// A comment line naming the policy and its sources; control characters cannot end the comment.
std::string header(const Policy& policy) {
  std::string out = "# effective policy";
  if (!policy.name.empty()) out += " '" + policy.name + "'";
  if (!policy.sources.empty()) {
    out += ", from";
    for (const auto& s : policy.sources) out += " " + s;
  }
  for (auto& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return out + "\n";
}

// TOML: inline values for everything but tables, which get [headers].
std::string toml_value(const Node& n) {
  switch (n.type) {
    case NodeType::boolean:
      return n.boolean ? "true" : "false";
    case NodeType::integer:
      return std::to_string(n.integer);
    case NodeType::floating:
      return detail::number_text(n.floating, false);
    case NodeType::array: {
      std::string out = "[";
      for (const auto& item : n.items) {
        if (item.type == NodeType::null) continue;  // TOML has no null
        out += (out.size() > 1 ? ", " : "") + toml_value(item);
      }
      return out + "]";
    }
    case NodeType::table: {
      std::string out = "{";
      for (const auto& e : n.entries) {
        if (e.value.type == NodeType::null) continue;
        out += (out.size() > 1 ? ", " : " ") + key_text(e.key) + " = " + toml_value(e.value);
      }
      return out + (out.size() > 1 ? " }" : "}");
    }
    default:
      return detail::quoted_string(n.text);
  }
}

void toml_table(const Node& table, const std::string& path, std::string& out) {
  for (const auto& e : table.entries)
    if (!e.value.is_table() && e.value.type != NodeType::null)
      out += key_text(e.key) + " = " + toml_value(e.value) + "\n";
  for (const auto& e : table.entries) {
    if (!e.value.is_table()) continue;
    std::string sub = path.empty() ? key_text(e.key) : path + "." + key_text(e.key);
    // A table holding only tables needs no header of its own: its children's define it.
    const auto& entries = e.value.entries;
    bool only_tables =
        !entries.empty() && std::all_of(entries.begin(), entries.end(),
                                        [](const auto& x) { return x.value.is_table(); });
    if (!only_tables) out += "\n[" + sub + "]\n";
    toml_table(e.value, sub, out);
  }
}

// YAML: block mappings for tables, flow style for lists, every string double-quoted so that
// none is read back as a number or a boolean.
std::string yaml_value(const Node& n) {
  switch (n.type) {
    case NodeType::null:
      return "null";
    case NodeType::boolean:
    case NodeType::integer:
      return toml_value(n);
    case NodeType::floating:
      return detail::number_text(n.floating, true);
    case NodeType::array: {
      std::string out = "[";
      for (const auto& item : n.items) out += (out.size() > 1 ? ", " : "") + yaml_value(item);
      return out + "]";
    }
    case NodeType::table: {
      std::string out = "{";
      for (const auto& e : n.entries)
        out += (out.size() > 1 ? ", " : "") + detail::quoted_string(e.key) + ": " +
               yaml_value(e.value);
      return out + "}";
    }
    default:
      return detail::quoted_string(n.text);
  }
}

void yaml_table(const Node& table, int indent, std::string& out) {
  for (const auto& e : table.entries) {
    out += std::string(indent, ' ') + yaml_key(e.key) + ":";
    if (e.value.is_table() && !e.value.entries.empty()) {
      out += "\n";
      yaml_table(e.value, indent + 2, out);
    } else {
      out += " " + yaml_value(e.value) + "\n";
    }
  }
}

}  // namespace

std::string to_toml(const Policy& policy) {
  std::string out = header(policy);
  toml_table(detail::encode_policy(policy), "", out);
  return out;
}

std::string to_yaml(const Policy& policy) {
  std::string out = header(policy);
  yaml_table(detail::encode_policy(policy), 0, out);
  return out;
}

std::string to_json(const Policy& policy) {
  return detail::pretty_json(detail::node_to_json(detail::encode_policy(policy)));
}

}  // namespace cordon
