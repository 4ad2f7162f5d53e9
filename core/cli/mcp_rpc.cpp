// JSON-RPC messages of the MCP server. Pure.
#include "mcp_rpc.hpp"

namespace cordon::cli::mcp {

namespace json = boost::json;

std::optional<Message> parse_message(std::string_view line) {
  boost::system::error_code ec;
  json::value v = json::parse(line, ec);
  if (ec) return std::nullopt;
  Message m;
  if (!v.is_object()) {
    m.problem = "a message must be a JSON object";
    return m;
  }
  const auto& o = v.as_object();
  const auto* version = o.if_contains("jsonrpc");
  if (!version || !version->is_string() || version->as_string() != "2.0") {
    m.problem = "\"jsonrpc\" must be \"2.0\"";
    return m;
  }
  const auto* id = o.if_contains("id");
  if (id && !id->is_string() && !id->is_int64() && !id->is_uint64()) {
    m.problem = "\"id\" must be a string or an integer";
    return m;
  }
  if (id) m.id = *id;
  const auto* method = o.if_contains("method");
  if (!method) {
    if (id && (o.contains("result") || o.contains("error"))) {
      m.kind = Message::Kind::response;
      if (const auto* r = o.if_contains("result"); r && r->is_object()) m.params = r->as_object();
      return m;
    }
    m.problem = "a message needs a \"method\" (or, as a response, a \"result\" or \"error\")";
    return m;
  }
  if (!method->is_string()) {
    m.problem = "\"method\" must be a string";
    return m;
  }
  m.method = std::string(method->as_string());
  if (const auto* params = o.if_contains("params")) {
    if (!params->is_object()) {
      m.problem = "\"params\" must be an object";
      return m;
    }
    m.params = params->as_object();
  }
  m.kind = id ? Message::Kind::request : Message::Kind::notification;
  return m;
}

std::string result_line(const json::value& id, const json::value& result) {
  return json::serialize(json::object{{"jsonrpc", "2.0"}, {"id", id}, {"result", result}});
}

std::string error_line(const json::value& id, int code, const std::string& message) {
  return json::serialize(
      json::object{{"jsonrpc", "2.0"},
                   {"id", id},
                   {"error", json::object{{"code", code}, {"message", message}}}});
}

std::string notification_line(const std::string& method, const json::object& params) {
  return json::serialize(json::object{{"jsonrpc", "2.0"}, {"method", method}, {"params", params}});
}

std::string request_line(const json::value& id, const std::string& method,
                         const json::object& params) {
  return json::serialize(
      json::object{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}});
}

std::string negotiate(std::string_view asked) {
  for (auto v : kVersions)
    if (v == asked) return std::string(v);
  return std::string(kVersions[0]);
}

}  // namespace cordon::cli::mcp
