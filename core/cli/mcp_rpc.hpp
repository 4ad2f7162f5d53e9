// JSON-RPC 2.0 as MCP's stdio transport carries it: one message per line, UTF-8, no embedded
// newline. Classifying a message, the answers, and the lifecycle's version negotiation. Pure.
#pragma once

#include <boost/json.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace cordon::cli::mcp {

/// The protocol revisions this server speaks, newest first.
inline constexpr std::string_view kVersions[] = {"2025-11-25", "2025-06-18", "2025-03-26",
                                                 "2024-11-05"};

/// JSON-RPC's error codes.
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;

/// The longest line read as a message; a longer one is answered with a parse error and
/// skipped to its end without being held in memory.
inline constexpr std::size_t kMaxMessageBytes = 16u << 20;

/// One incoming message.
struct Message {
  enum class Kind { request, notification, response, invalid } kind = Kind::invalid;
  boost::json::value id;  ///< a request's (string or integer); null otherwise
  std::string method;
  boost::json::object params;
  std::string problem;  ///< why it is invalid
};

/// Classifies `line`: a request (method and id), a notification (method, no id), a response to
/// one of ours (result or error with an id), or invalid (with the problem). nullopt when the
/// line is not JSON at all (a parse error).
std::optional<Message> parse_message(std::string_view line);

/// {"jsonrpc":"2.0","id":id,"result":result} on one line, without the newline.
std::string result_line(const boost::json::value& id, const boost::json::value& result);
/// {"jsonrpc":"2.0","id":id,"error":{"code":code,"message":message}}.
std::string error_line(const boost::json::value& id, int code, const std::string& message);
/// {"jsonrpc":"2.0","method":method,"params":params}.
std::string notification_line(const std::string& method, const boost::json::object& params);
/// A request of the server's own (elicitation).
std::string request_line(const boost::json::value& id, const std::string& method,
                         const boost::json::object& params);

/// The revision to answer `initialize` with: the client's when this server speaks it, else
/// the newest this server speaks.
std::string negotiate(std::string_view asked);

}  // namespace cordon::cli::mcp
