// The policy tree and Boost.JSON: backend settings travel to plugins as JSON objects, and the
// JSON forms of a policy and of its schema are printed readably.
#include <boost/json.hpp>

#include "policy_emit.hpp"
#include "policy_keys.hpp"

namespace cordon::detail {

boost::json::value node_to_json(const Node& node) {
  switch (node.type) {
    case NodeType::null:
      return nullptr;
    case NodeType::boolean:
      return node.boolean;
    case NodeType::integer:
      return node.integer;
    case NodeType::floating:
      return node.floating;
    case NodeType::string:
    case NodeType::datetime:
      return boost::json::string(node.text);
    case NodeType::array: {
      boost::json::array out;
      out.reserve(node.items.size());
      for (const auto& item : node.items) out.push_back(node_to_json(item));
      return out;
    }
    case NodeType::table: {
      boost::json::object out;
      for (const auto& e : node.entries) out[e.key] = node_to_json(e.value);
      return out;
    }
  }
  return nullptr;
}

Node json_to_node(const boost::json::value& value) {
  switch (value.kind()) {
    case boost::json::kind::bool_:
      return make_bool(value.get_bool());
    case boost::json::kind::int64:
      return make_integer(value.get_int64());
    case boost::json::kind::uint64:
      return make_integer(static_cast<std::int64_t>(value.get_uint64()));
    case boost::json::kind::double_: {
      Node out;
      out.type = NodeType::floating;
      out.floating = value.get_double();
      return out;
    }
    case boost::json::kind::string:
      return make_string(std::string(value.get_string()));
    case boost::json::kind::array: {
      Node out = make_array();
      for (const auto& item : value.get_array()) out.items.push_back(json_to_node(item));
      return out;
    }
    case boost::json::kind::object: {
      Node out = make_table();
      for (const auto& [k, v] : value.get_object())
        out.entries.push_back(NodeEntry{std::string(k), {}, json_to_node(v)});
      return out;
    }
    case boost::json::kind::null:
      break;
  }
  return Node{};
}

namespace {

bool is_container(const boost::json::value& v) { return v.is_object() || v.is_array(); }

void pretty(const boost::json::value& v, int indent, std::string& out) {
  const std::string pad(indent + 2, ' ');
  if (v.is_object() && !v.get_object().empty()) {
    out += "{\n";
    bool first = true;
    for (const auto& [k, item] : v.get_object()) {
      out += (first ? "" : ",\n") + pad + boost::json::serialize(boost::json::string(k)) + ": ";
      pretty(item, indent + 2, out);
      first = false;
    }
    out += "\n" + std::string(indent, ' ') + "}";
  } else if (v.is_array() && !v.get_array().empty()) {
    const auto& array = v.get_array();
    bool flat = std::none_of(array.begin(), array.end(), is_container);
    out += flat ? "[" : "[\n";
    bool first = true;
    for (const auto& item : array) {
      out += first ? (flat ? "" : pad) : (flat ? ", " : ",\n" + pad);
      pretty(item, indent + 2, out);
      first = false;
    }
    out += flat ? "]" : "\n" + std::string(indent, ' ') + "]";
  } else if (v.is_double()) {
    out += number_text(v.get_double(), false);
  } else {
    out += boost::json::serialize(v);
  }
}

}  // namespace

std::string pretty_json(const boost::json::value& value) {
  std::string out;
  pretty(value, 0, out);
  return out + "\n";
}

}  // namespace cordon::detail
